/**
 * Uploads and their life: issue a signed PUT link; claim the uploaded object for a note; sign a
 * download link; release it (delete the object). The sweeper removes objects never claimed and
 * finishes releases that failed; the purge deletes a released key's object once more after every
 * link that could put it back has expired, then the record. Every state change of a record is its
 * next version, taken as a turn (records.ts).
 *
 * Issuing a single-PUT link writes nothing: the owner and the declared size are signed into the
 * link as object metadata, so the object itself says whose it is, and the record is written when
 * it is claimed (a unique index on the key lets one claim win). Issuing a link then costs a
 * signature, no more than a read; a database write per link cost more than half the throughput on
 * FerretDB. Objects never claimed have no record: the sweeper finds them by listing `uploads/`.
 */
import { HttpError } from '@cs/errors';
import type { Logger } from '@cs/log';
import { isDuplicateKey, trusted } from '@cs/mongo';
import type { ObjectInfo, ObjectStorage } from '@cs/storage';
import { counter } from '@cs/telemetry';
import type { UploadModel, UploadRecord } from './model';
import type { Read, Records } from './records';
import { messages } from './schemas';
import type { UploadRequest } from './upload-input';
import { newUploadKey } from './upload-key';

export interface UploadSettings {
  uploadTtlS: number;
  downloadTtlS: number;
  claimTtlMs: number;
  /** How long a released record is kept after its last link expired, before the purge. */
  releasedRetentionMs: number;
  /** The largest single-PUT object; a record from before sizes were required is held to it. */
  maxBytes: number;
}

export interface IssuedUpload {
  url: string;
  key: string;
  /** Exactly the headers the client must send with its PUT. */
  headers: Record<string, string>;
  expiresIn: number;
}

/** What the sweeper removed, by kind; and its failures (a pass or one record that stopped on an error). */
export const sweeperRemoved = counter(
  'files_sweeper_removed_total',
  'What the sweeper removed: stale (issued keys never attached, and releases it finished), unclaimed (objects no record names) and purged (released records past their retention).',
  ['kind'],
);
export const sweeperFailures = counter(
  'files_sweeper_failures_total',
  'Sweeper passes, or single records, that stopped on an error; the next pass retries them.',
);

/** How long a worker holds a record it is releasing before the sweeper may take it over. */
const LEASE_MS = 60_000;
/** Records the sweeper reads per query; each is then taken, or left to a replica that took it. */
const SWEEP_BATCH = 20;
/** Listing pages (of 1,000 objects) the sweeper reads per pass, going on from where it stopped. */
const SCAN_PAGES = 10;
/** Last-Modified in a HEAD is an HTTP date: whole seconds. */
const LAST_MODIFIED_PRECISION_MS = 1000;
/** The metadata a single-PUT link signs into its object. */
const OWNER = 'owner';
const DECLARED_SIZE = 'size';

/**
 * An unclaimed object is deleted this long after the claim TTL has passed, and a claim refuses it
 * from the TTL on (at most a second later, see LAST_MODIFIED_PRECISION_MS): so a claim and the
 * sweeper never act on one object at once, even with clocks that differ by minutes.
 */
function sweepMarginMs(claimTtlMs: number): number {
  return Math.max(LAST_MODIFIED_PRECISION_MS, Math.min(10 * 60_000, claimTtlMs));
}

export function createUploads({
  model,
  records,
  storage,
  settings,
  logger,
}: {
  model: UploadModel;
  records: Records;
  storage: ObjectStorage;
  settings: UploadSettings;
  logger: Logger;
}) {
  const { read, owned, advance } = records;
  /** Where the scan of `uploads/` goes on at the next pass; from the start when undefined. */
  let scanAfter: string | undefined;

  /**
   * A claim of an object a single-PUT link put there, with no record yet: its signed metadata
   * names the owner and the declared size. The record is written as attached; a second claim
   * meets the unique key and is refused.
   */
  async function claimUnrecorded(ownerId: string, key: string, object: ObjectInfo | undefined) {
    if (!object) throw new HttpError(409, messages.notUploaded);
    if (object.metadata[OWNER] !== ownerId) throw new HttpError(404, messages.uploadNotFound);
    if (object.metadata[DECLARED_SIZE] !== String(object.size) || object.size > settings.maxBytes) {
      await storage.deleteObject(key);
      logger.warn(
        { key, declared: object.metadata[DECLARED_SIZE], stored: object.size },
        'deleted an object of the wrong size',
      );
      throw new HttpError(409, messages.wrongSize);
    }
    // A HEAD's Last-Modified has whole seconds, so the put may have been up to a second later
    // than it says: refused once the TTL has passed for certain. The sweeper's margin (at least
    // a second) keeps it away from an object still claimable.
    if (Date.now() - object.lastModified.getTime() >= settings.claimTtlMs + LAST_MODIFIED_PRECISION_MS) {
      throw new HttpError(409, messages.claimExpired);
    }
    const contentType = object.contentType ?? 'application/octet-stream';
    try {
      await model.create({
        key,
        ownerId,
        contentType,
        size: object.size,
        state: 'attached',
        issuedAt: object.lastModified,
        attachedAt: new Date(),
      });
    } catch (err) {
      if (isDuplicateKey(err)) throw new HttpError(409, messages.notClaimable);
      throw err;
    }
    return { key, contentType, size: object.size };
  }

  /**
   * Takes a record into `releasing` (with a lease), aborts its multipart upload if it has one,
   * deletes its object, and marks it released.
   */
  async function releaseNow(record: Read): Promise<boolean> {
    const taken = await advance(record, {
      state: 'releasing',
      lockedUntil: new Date(Date.now() + LEASE_MS),
      attempts: (record.attempts ?? 0) + 1,
    });
    if (!taken) return false;
    try {
      // Aborted first: parts still coming can then never be joined into an object after the delete.
      if (taken.multipart && !taken.multipart.completedAt) {
        await storage.abortMultipartUpload(taken.key, taken.multipart.storageUploadId);
      }
      await storage.deleteObject(taken.key);
    } catch (err) {
      // Let the sweeper take it over at once.
      await advance(taken, { lockedUntil: new Date() });
      throw err;
    }
    // A holder that outlived its hold time cannot take this turn: the record stays `releasing`
    // until its lease runs out, and the sweeper finishes the release then.
    const now = Date.now();
    const linksExpire = taken.issuedAt.getTime() + settings.uploadTtlS * 1000;
    await advance(taken, {
      state: 'released',
      releasedAt: new Date(now),
      purgeAfter: new Date(Math.max(now, linksExpire) + settings.releasedRetentionMs),
    });
    return true;
  }

  return {
    async issue(ownerId: string, { contentType, filename, size }: UploadRequest): Promise<IssuedUpload> {
      await storage.assertReachable();
      const key = newUploadKey(filename);
      const metadata = { [OWNER]: ownerId, [DECLARED_SIZE]: String(size) };
      const link = await storage.signPut(key, { contentType, size, metadata, expiresIn: settings.uploadTtlS });
      return { ...link, key, expiresIn: settings.uploadTtlS };
    },

    /**
     * The key was issued to this caller, is not yet attached, and its object is in storage with
     * exactly the size declared. An object of any other size is deleted (the key stays claimable
     * by a right one while its link lasts).
     */
    async claim(ownerId: string, key: string) {
      // Storage first, so the read below is followed by the record's turn at once.
      const object = await storage.headObject(key);
      const record = await read(key);
      if (!record) return claimUnrecorded(ownerId, key, object);
      if (record.ownerId !== ownerId) throw new HttpError(404, messages.uploadNotFound);
      if (record.state !== 'issued') throw new HttpError(409, messages.notClaimable);
      if (!object) throw new HttpError(409, messages.notUploaded);
      const fits = record.size === null ? object.size <= settings.maxBytes : object.size === record.size;
      if (!fits) {
        await storage.deleteObject(key);
        logger.warn({ key, declared: record.size, stored: object.size }, 'deleted an object of the wrong size');
        throw new HttpError(409, messages.wrongSize);
      }
      if (!(await advance(record, { state: 'attached', attachedAt: new Date() }))) {
        throw new HttpError(409, messages.notClaimable);
      }
      return { key, contentType: record.contentType, size: object.size };
    },

    /** A GET link for an attached object of the caller's; 404 when the object is gone. */
    async signDownload(ownerId: string, key: string) {
      const record = await owned(ownerId, key);
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
            sweeperFailures.inc();
            logger.warn({ err, key: record.key }, 'sweeper could not delete an object; will retry');
            return released;
          }
        }
        // Nothing due, or every record due was taken by another replica: this pass is done.
        if (taken === 0) break;
      }
      return released;
    },

    /**
     * Objects under `uploads/` that no record names, older than the claim TTL and its margin: put
     * there by a link and never claimed. A pass reads up to SCAN_PAGES pages of the listing and the
     * next pass goes on from there. Replicas may delete the same object: deleting is idempotent.
     */
    async sweepUnclaimed(): Promise<number> {
      let deleted = 0;
      for (let page = 0; page < SCAN_PAGES; page++) {
        const { objects, next } = await storage.listObjects('uploads/', { after: scanAfter });
        scanAfter = next;
        const cutoff = Date.now() - settings.claimTtlMs - sweepMarginMs(settings.claimTtlMs);
        const old = objects.filter((o) => o.lastModified.getTime() < cutoff).map((o) => o.key);
        if (old.length > 0) {
          const known = await model.find({ key: trusted({ $in: old }) }, { key: 1 }).lean<{ key: string }[]>();
          const recorded = new Set(known.map((r) => r.key));
          for (const key of old.filter((k) => !recorded.has(k))) {
            await storage.deleteObject(key);
            deleted += 1;
          }
        }
        if (!next) break;
      }
      return deleted;
    },

    /**
     * The owner's account was deleted: every record of theirs, whatever its state, goes with its
     * object; a multipart upload is aborted first, so no part still coming can be joined after the
     * delete (a completed one has nothing to abort). A worker holding a record meanwhile finds it
     * gone and writes nothing. Objects put through a link and never claimed have no record, so no
     * owner here: they stay until the sweeper deletes them, UPLOAD_CLAIM_TTL and its margin after
     * their upload (sweepUnclaimed), as it does any unclaimed object; so does an object that a link
     * still valid now puts back later. A record goes after its object, so a failure leaves it for
     * the next call: identity calls again until it gets a 204.
     */
    async removeAllOf(ownerId: string): Promise<void> {
      const owned = await model.find({ ownerId }, 'key multipart').lean<Pick<UploadRecord, 'key' | 'multipart'>[]>();
      for (const { key, multipart } of owned) {
        if (multipart) await storage.abortMultipartUpload(key, multipart.storageUploadId);
        await storage.deleteObject(key);
        await model.deleteOne({ key });
      }
    },

    /**
     * Released records past their retention: their key's object is deleted once more (a link
     * still valid at the release could have put it back), then the record. Replicas may do the
     * same record at once: both steps are idempotent, and a released record never changes.
     */
    async purge(limit = 100): Promise<number> {
      const due = await model
        .find({
          $or: [
            { state: 'released', purgeAfter: trusted({ $lte: new Date() }) },
            // Released before purge times were recorded.
            { state: 'released', purgeAfter: null },
          ],
        })
        .limit(limit)
        .lean<UploadRecord[]>();
      for (const { key } of due) {
        await storage.deleteObject(key);
        await model.deleteOne({ key, state: 'released' });
      }
      return due.length;
    },
  };
}

export type Uploads = ReturnType<typeof createUploads>;
