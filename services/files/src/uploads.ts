/**
 * Issued uploads and their life: issue a signed PUT link and record it; claim it for a note;
 * sign a download link; release it (delete the object). The sweeper removes keys never claimed
 * and finishes releases that failed. Every state change of a record is its next version, taken as
 * a turn (`@cs/mongo` turns), so one claim, one release and one sweeper replica ever act on it at
 * a time, on FerretDB as on MongoDB.
 */
import { HttpError } from '@cs/errors';
import type { Logger } from '@cs/log';
import { type Turns, trusted } from '@cs/mongo';
import type { ObjectStorage } from '@cs/storage';
import type { UploadModel, UploadRecord } from './model';
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

/** How long a worker holds a record it is releasing before the sweeper may take it over. */
const LEASE_MS = 60_000;
/** Records the sweeper reads per query; each is then taken, or left to a replica that took it. */
const SWEEP_BATCH = 20;

/** A record as read, and when: its next version must be taken within the turns' hold time. */
type Read = UploadRecord & { readAt: number };

export function createUploads({
  model,
  storage,
  turns,
  settings,
  logger,
}: {
  model: UploadModel;
  storage: ObjectStorage;
  turns: Turns;
  settings: UploadSettings;
  logger: Logger;
}) {
  async function read(key: string): Promise<Read | undefined> {
    const readAt = Date.now();
    const record = await model.findOne({ key }).lean<UploadRecord>();
    return record ? { ...record, readAt } : undefined;
  }

  async function ownedRecord(ownerId: string, key: string): Promise<Read> {
    const record = await read(key);
    if (!record || record.ownerId !== ownerId) throw new HttpError(404, messages.uploadNotFound);
    return record;
  }

  /**
   * Writes `changes` as the record's next version if this caller gets that turn; otherwise
   * another claim, release or sweeper replica got there first, and nothing is written.
   */
  async function advance(record: Read, changes: Partial<UploadRecord>): Promise<Read | undefined> {
    const done = await turns.advance(
      `upload:${record.key}`,
      record.version ?? 0,
      record.readAt,
      async (version) => {
        const filter = { key: record.key, version: record.version ?? null };
        const { matchedCount } = await model.updateOne(filter, { $set: { ...changes, version } });
        return matchedCount > 0 ? true : null;
      },
      async () => (await read(record.key))?.version ?? 0,
    );
    return done && { ...record, ...changes, version: done.version, readAt: Date.now() };
  }

  /** Takes a record into `releasing` (with a lease), deletes its object, and marks it released. */
  async function releaseNow(record: Read): Promise<boolean> {
    const taken = await advance(record, {
      state: 'releasing',
      lockedUntil: new Date(Date.now() + LEASE_MS),
      attempts: (record.attempts ?? 0) + 1,
    });
    if (!taken) return false;
    try {
      await storage.deleteObject(taken.key);
    } catch (err) {
      // Let the sweeper take it over at once.
      await advance(taken, { lockedUntil: new Date() });
      throw err;
    }
    // A holder that outlived its hold time cannot take this turn: the record stays `releasing`
    // until its lease runs out, and the sweeper finishes the release then.
    await advance(taken, { state: 'released', releasedAt: new Date() });
    return true;
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
      // Storage first, so the read below is followed by the record's turn at once.
      const object = await storage.headObject(key);
      const record = await ownedRecord(ownerId, key);
      if (record.state !== 'issued') throw new HttpError(409, messages.notClaimable);
      if (!object) throw new HttpError(409, messages.notUploaded);
      if (!(await advance(record, { state: 'attached', attachedAt: new Date() }))) {
        throw new HttpError(409, messages.notClaimable);
      }
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

    /**
     * Idempotent: a key already released, unknown, or not the caller's is nothing to do, and so
     * is one that another worker is releasing now (the sweeper finishes it if that worker fails).
     */
    async release(ownerId: string, key: string): Promise<void> {
      const record = await read(key);
      if (!record || record.ownerId !== ownerId || record.state === 'released') return;
      if (record.state === 'releasing' && record.lockedUntil.getTime() > Date.now()) return;
      await releaseNow(record);
    },

    /**
     * One pass: keys issued longer ago than the claim TTL and never attached, and releases whose
     * lease ran out. Replicas that sweep at once read the same records, and each record goes to
     * the one that takes its turn.
     */
    async sweep(limit = 100): Promise<number> {
      let released = 0;
      while (released < limit) {
        const readAt = Date.now();
        const due = await model
          .find({
            $or: [
              { state: 'issued', issuedAt: trusted({ $lt: new Date(readAt - settings.claimTtlMs) }) },
              { state: 'releasing', lockedUntil: trusted({ $lte: new Date(readAt) }) },
            ],
          })
          .limit(SWEEP_BATCH)
          .lean<UploadRecord[]>();
        let taken = 0;
        for (const record of due) {
          try {
            if (!(await releaseNow({ ...record, readAt }))) continue;
            taken += 1;
            released += 1;
          } catch (err) {
            logger.warn({ err, key: record.key }, 'sweeper could not delete an object; will retry');
            return released;
          }
        }
        // Nothing due, or every record due was taken by another replica: this pass is done.
        if (taken === 0) break;
      }
      return released;
    },
  };
}

export type Uploads = ReturnType<typeof createUploads>;
