/**
 * Issued uploads and their life: issue a signed PUT link and record it; claim it for a note;
 * sign a download link; release it (delete the object). The sweeper removes keys never claimed
 * and finishes releases that failed. Every state change is one conditional update, so replicas
 * and retries never double-handle a record.
 */
import { HttpError } from '@cs/errors';
import type { Logger } from '@cs/log';
import { trusted } from '@cs/mongo';
import type { ObjectStorage } from '@cs/storage';
import type { UploadModel, UploadRecord, UploadState } from './model';
import { messages } from './schemas';
import type { UploadRequest } from './upload-input';
import { newUploadKey } from './upload-key';

export interface UploadSettings {
  uploadTtlS: number;
  downloadTtlS: number;
  claimTtlMs: number;
}

export interface IssuedUpload {
  url: string;
  key: string;
  /** Exactly the headers the client must send with its PUT. */
  headers: Record<string, string>;
  expiresIn: number;
}

/** How long a worker holds a record it is releasing before another may take it over. */
const LEASE_MS = 60_000;
const RELEASABLE: UploadState[] = ['issued', 'attached', 'releasing'];

export function createUploads({
  model,
  storage,
  settings,
  logger,
}: {
  model: UploadModel;
  storage: ObjectStorage;
  settings: UploadSettings;
  logger: Logger;
}) {
  async function ownedRecord(ownerId: string, key: string): Promise<UploadRecord> {
    const record = await model.findOne({ key }).lean<UploadRecord>();
    if (!record || record.ownerId !== ownerId) throw new HttpError(404, messages.uploadNotFound);
    return record;
  }

  /** Deletes the object of a record in `releasing`, then marks it released. */
  async function finishRelease(key: string): Promise<void> {
    try {
      await storage.deleteObject(key);
    } catch (err) {
      // Let the sweeper take it over at once.
      await model.updateOne({ key, state: 'releasing' }, { $set: { lockedUntil: new Date() } });
      throw err;
    }
    await model.updateOne({ key, state: 'releasing' }, { $set: { state: 'released', releasedAt: new Date() } });
  }

  return {
    async issue(ownerId: string, { contentType, filename, size }: UploadRequest): Promise<IssuedUpload> {
      await storage.assertReachable();
      const key = newUploadKey(filename);
      const url = await storage.signPut(key, { contentType, size, expiresIn: settings.uploadTtlS });
      await model.create({ key, ownerId, contentType, size: size ?? null, state: 'issued', issuedAt: new Date() });
      const headers: Record<string, string> = { 'Content-Type': contentType };
      if (size !== undefined) headers['Content-Length'] = String(size);
      return { url, key, headers, expiresIn: settings.uploadTtlS };
    },

    /** The key was issued to this caller, is not yet attached, and its object is in storage. */
    async claim(ownerId: string, key: string) {
      const record = await ownedRecord(ownerId, key);
      if (record.state !== 'issued') throw new HttpError(409, messages.notClaimable);
      const object = await storage.headObject(key);
      if (!object) throw new HttpError(409, messages.notUploaded);
      const claimed = await model
        .findOneAndUpdate(
          { key, ownerId, state: 'issued' },
          { $set: { state: 'attached', attachedAt: new Date() } },
          { returnDocument: 'after' },
        )
        .lean<UploadRecord>();
      if (!claimed) throw new HttpError(409, messages.notClaimable);
      return { key, contentType: record.contentType, size: object.size };
    },

    /** A GET link for an attached object of the caller's; 404 when the object is gone. */
    async signDownload(ownerId: string, key: string) {
      const record = await ownedRecord(ownerId, key);
      if (record.state !== 'attached') throw new HttpError(404, messages.uploadNotFound);
      if (!(await storage.headObject(key))) throw new HttpError(404, 'File not found');
      const url = await storage.signGet(key, { expiresIn: settings.downloadTtlS });
      return { url, expiresIn: settings.downloadTtlS };
    },

    /** Idempotent: a key already released, unknown, or not the caller's is nothing to do. */
    async release(ownerId: string, key: string): Promise<void> {
      const taken = await model
        .findOneAndUpdate(
          { key, ownerId, state: trusted({ $in: RELEASABLE }) },
          { $set: { state: 'releasing', lockedUntil: new Date(Date.now() + LEASE_MS) } },
          { returnDocument: 'after' },
        )
        .lean<UploadRecord>();
      if (taken) await finishRelease(key);
    },

    /**
     * One pass: keys issued longer ago than the claim TTL and never attached, and releases whose
     * lease ran out, are taken one at a time (atomically, so replicas share the work) and deleted.
     */
    async sweep(limit = 100): Promise<number> {
      let released = 0;
      while (released < limit) {
        const now = Date.now();
        const record = await model
          .findOneAndUpdate(
            {
              $or: [
                { state: 'issued', issuedAt: trusted({ $lt: new Date(now - settings.claimTtlMs) }) },
                { state: 'releasing', lockedUntil: trusted({ $lte: new Date(now) }) },
              ],
            },
            { $set: { state: 'releasing', lockedUntil: new Date(now + LEASE_MS) }, $inc: { attempts: 1 } },
            { returnDocument: 'after' },
          )
          .lean<UploadRecord>();
        if (!record) break;
        try {
          await finishRelease(record.key);
          released += 1;
        } catch (err) {
          logger.warn({ err, key: record.key }, 'sweeper could not delete an object; will retry');
          break;
        }
      }
      return released;
    },
  };
}

export type Uploads = ReturnType<typeof createUploads>;
