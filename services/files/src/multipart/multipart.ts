/**
 * Large files in parts, straight to storage. The client creates an upload (its total size
 * declared), has part links signed in batches (each part's length signed in, so storage refuses
 * any other), lists what storage already holds to resume, and completes; completion checks
 * storage's own part listing against the declared size first. A completed upload is an issued key
 * like any other: it is claimed, attached, released and swept the same way (uploads.ts, sweeper.ts).
 *
 * Only the owner reaches an upload: anyone else's id answers the same 404 as an unknown one.
 */
import { randomUUID } from 'node:crypto';
import { fieldError, HttpError } from '@cs/errors';
import type { ObjectStorage, StoredPart } from '@cs/storage';
import type { LinkSlots } from '../links/link-slots';
import type { UnclaimedBudget } from '../links/unclaimed-budget';
import { messages } from '../messages';
import { displayFilename } from '../uploads/file-name';
import type { UploadModel } from '../uploads/model';
import type { Records } from '../uploads/records';
import type { UploadRequest } from '../uploads/upload-input';
import { uploadKey } from '../uploads/upload-key';
import type { Uploads } from '../uploads/uploads';

const MiB = 1024 * 1024;
/** Storage's bounds: parts of 5 MiB to 5 GiB (the last may be smaller), at most 10,000 of them. */
export const MIN_PART_SIZE = 5 * MiB;
export const MAX_PART_SIZE = 5 * 1024 * MiB;
export const MAX_PARTS = 10_000;
/** Storage's bound on an object, whatever the configuration says. */
export const MAX_OBJECT_SIZE = 5 * 1024 * 1024 * MiB;

export interface MultipartSettings {
  /** The part size asked of clients, raised for files that would otherwise need over 10,000 parts. */
  partSize: number;
  /** How long a part link stays valid. */
  urlTtlS: number;
  /** How long an upload may stay unattached before the sweeper releases it (and frees its slot). */
  claimTtlMs: number;
}

/** The part size for a file: the configured one, or whole MiBs enough to stay within 10,000 parts. */
export function partSizeFor(size: number, preferred: number): number {
  const needed = Math.ceil(size / MAX_PARTS / MiB) * MiB;
  return Math.min(MAX_PART_SIZE, Math.max(preferred, needed, MIN_PART_SIZE));
}

/** The length of part `n` (1-based): the part size, and whatever is left for the last part. */
export function partLength(n: number, size: number, partSize: number): number {
  return Math.min(partSize, size - (n - 1) * partSize);
}

export function createMultipart({
  model,
  records,
  uploads,
  slots,
  budget,
  storage,
  settings,
}: {
  model: UploadModel;
  records: Records;
  uploads: Uploads;
  /** One per open upload (link-slots.ts): taken at create, freed at completion or release. */
  slots: LinkSlots;
  budget: UnclaimedBudget;
  storage: ObjectStorage;
  settings: MultipartSettings;
}) {
  /** The caller's upload, unless it was aborted or swept: then it is as gone as an unknown id. */
  async function live(ownerId: string, id: string) {
    const record = await records.ownedMultipart(ownerId, id);
    if (record.state === 'released' || record.state === 'releasing') throw new HttpError(404, messages.uploadNotFound);
    return record;
  }

  /** The caller's upload, still taking parts: not completed, attached or released. */
  async function open(ownerId: string, id: string) {
    const record = await live(ownerId, id);
    if (record.state === 'attached' || record.multipart.completedAt) throw new HttpError(409, messages.uploadCompleted);
    return record;
  }

  function describe(record: Awaited<ReturnType<typeof live>>) {
    const { id: uploadId, partSize, partCount, completedAt } = record.multipart;
    return { uploadId, key: record.key, size: record.size as number, partSize, partCount, completed: !!completedAt };
  }

  return {
    async create(ownerId: string, { contentType, filename, size }: Required<UploadRequest>) {
      budget.refuse(ownerId, size);
      await storage.assertReachable();
      const id = randomUUID();
      const key = uploadKey(id, filename);
      const partSize = partSizeFor(size, settings.partSize);
      const partCount = Math.ceil(size / partSize);
      const issuedAt = new Date();
      // Until the sweeper would release it unattached, unless completed or aborted before.
      await slots.take(ownerId, key, new Date(issuedAt.getTime() + settings.claimTtlMs));
      let storageUploadId: string | undefined;
      try {
        storageUploadId = await storage.createMultipartUpload(key, contentType);
        await model.create({
          key,
          ownerId,
          contentType,
          filename: displayFilename(filename),
          size,
          state: 'issued',
          issuedAt,
          multipart: { id, storageUploadId, partSize, partCount, completedAt: null },
        });
      } catch (err) {
        // Without its record nothing would ever abort it, or free its slot.
        if (storageUploadId) await storage.abortMultipartUpload(key, storageUploadId).catch(() => undefined);
        await slots.free(ownerId, key).catch(() => undefined);
        throw err;
      }
      return { uploadId: id, key, size, partSize, partCount, completed: false };
    },

    /** One link per part number, each with the exact length storage will accept. */
    async signParts(ownerId: string, id: string, partNumbers: readonly number[]) {
      const record = await open(ownerId, id);
      const { storageUploadId, partSize, partCount } = record.multipart;
      const size = record.size as number;
      const outside = partNumbers.find((n) => n > partCount);
      if (outside !== undefined) throw fieldError('partNumbers', messages.partOutOfRange(partCount));
      const parts = await Promise.all(
        [...new Set(partNumbers)].map(async (partNumber) => {
          const link = await storage.signPart(record.key, storageUploadId, {
            partNumber,
            size: partLength(partNumber, size, partSize),
            expiresIn: settings.urlTtlS,
          });
          return { partNumber, ...link };
        }),
      );
      return { parts, expiresIn: settings.urlTtlS };
    },

    /** The upload and the parts storage already holds, so that a client sends only the others. */
    async status(ownerId: string, id: string) {
      const record = await live(ownerId, id);
      const upload = describe(record);
      if (upload.completed || record.state === 'attached') return { ...upload, completed: true, parts: [] };
      const stored = await storage.listParts(record.key, record.multipart.storageUploadId);
      if (!stored) {
        // Storage holds no such upload: joined by a completion whose answer was lost (the record
        // is marked on the next complete), or gone.
        const object = await storage.headObject(record.key);
        if (object?.size === upload.size) return { ...upload, completed: true, parts: [] };
        throw new HttpError(404, messages.uploadNotFound);
      }
      return { ...upload, parts: stored.map(({ partNumber, size }) => ({ partNumber, size })) };
    },

    /**
     * Joins the parts, once storage's own listing shows exactly parts 1…partCount, each of its
     * signed length: so the object is exactly the declared size. Completing twice answers the same.
     */
    async complete(ownerId: string, id: string) {
      const first = await live(ownerId, id);
      const size = first.size as number;
      if (first.multipart.completedAt || first.state === 'attached') return { key: first.key, size };
      const { storageUploadId, partSize, partCount } = first.multipart;
      const stored = await storage.listParts(first.key, storageUploadId);
      if (stored) {
        await storage.completeMultipartUpload(first.key, storageUploadId, inOrder(stored, size, partSize, partCount));
      }
      // The object must now be there at the declared size: joined just now, or by a completion
      // alongside (storage then held no such upload any more). An aborted upload has none.
      const object = await storage.headObject(first.key);
      if (!object || object.size !== size) throw new HttpError(404, messages.uploadNotFound);
      // Read again: joining a large file can outlast the hold time of the first read's turn.
      const record = await records.read(first.key);
      if (record?.state === 'issued' && record.multipart && !record.multipart.completedAt) {
        await records.advance(record, { multipart: { ...record.multipart, completedAt: new Date() } });
      }
      // No longer open: its object counts in the budget as any upload not yet attached.
      await slots.free(ownerId, first.key);
      return { key: first.key, size };
    },

    /**
     * Aborts the upload and removes whatever it stored; a completed but unattached one too. A
     * note's claim of the key racing it: exactly one wins (see `uploads.abandon`).
     */
    async abort(ownerId: string, id: string): Promise<void> {
      const record = await records.ownedMultipart(ownerId, id);
      await uploads.abandon(ownerId, record.key);
    },
  };
}

/**
 * Parts 1…partCount in order, when `stored` is exactly those parts, each of its signed length;
 * otherwise a 409 that says what is wrong.
 */
function inOrder(stored: readonly StoredPart[], size: number, partSize: number, partCount: number): StoredPart[] {
  const byNumber = new Map(stored.map((part) => [part.partNumber, part]));
  const missing: number[] = [];
  for (let n = 1; n <= partCount; n++) if (!byNumber.has(n)) missing.push(n);
  if (missing.length > 0) throw new HttpError(409, messages.partsMissing(missing));
  const wrong = stored.some(
    (part) =>
      part.partNumber < 1 || part.partNumber > partCount || part.size !== partLength(part.partNumber, size, partSize),
  );
  if (wrong) throw new HttpError(409, messages.partsMismatch);
  return Array.from({ length: partCount }, (_, i) => byNumber.get(i + 1) as StoredPart);
}

export type Multipart = ReturnType<typeof createMultipart>;
