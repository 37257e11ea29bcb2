/**
 * Releasing an upload: the record is taken into `releasing` under a lease, its multipart upload
 * aborted, its object deleted, and the record marked released with the time the purge may remove
 * it. The owner's release and abort (uploads.ts) and the sweeper (sweeper.ts) all release this way;
 * each step is the record's next version, taken as a turn (records.ts), so one of them ever
 * releases a given version, and a lease that runs out leaves the release to the sweeper.
 */
import type { ObjectStorage } from '@cs/storage';
import type { LinkSlots } from '../links/link-slots';
import { deleteUploadObject } from './delete-upload-object';
import type { UploadRecord } from './model';
import type { Read, Records } from './records';

/** How long a worker holds a record it is releasing before the sweeper may take it over. */
const LEASE_MS = 60_000;

export interface ReleaseSettings {
  uploadTtlS: number;
  /** How long a released record is kept after its last link expired, before the purge. */
  releasedRetentionMs: number;
}

/** Another worker is releasing the record now (the sweeper finishes it if that worker fails). */
export function beingReleased(record: Pick<UploadRecord, 'state' | 'lockedUntil'>): boolean {
  return record.state === 'releasing' && record.lockedUntil.getTime() > Date.now();
}

export function createRelease({
  records,
  storage,
  multipartSlots,
  settings,
}: {
  records: Records;
  storage: ObjectStorage;
  /** The slots of open multipart uploads (multipart.ts takes them; a release frees one). */
  multipartSlots: LinkSlots;
  settings: ReleaseSettings;
}) {
  const { advance } = records;

  /**
   * Takes a record into `releasing` (with a lease, and `why` if given), aborts its multipart
   * upload if it has one, deletes its object, and marks it released. False when another writer
   * took the record's turn first.
   */
  return async function release(record: Read, why: Partial<UploadRecord> = {}): Promise<boolean> {
    const taken = await advance(record, {
      ...why,
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
      await deleteUploadObject(storage, taken.key);
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
    // Not freed, the slot frees itself when the sweeper would have released the upload anyway.
    if (taken.multipart) await multipartSlots.free(taken.ownerId, taken.key).catch(() => undefined);
    return true;
  };
}

export type Release = ReturnType<typeof createRelease>;
