/**
 * What a stored object must be to be kept, as storage's HEAD shows it. A single-PUT link with size
 * signs its owner and the declared size into the object's metadata, so the object itself says
 * whose it is and how large it must be; a size-less link's object is held to the upload limit and
 * the content type it was issued for. The claim (uploads.ts) and the sweeper (sweeper.ts) judge
 * objects by these same rules, and keep apart in time by the claim window below.
 */
import type { Logger } from '@cs/log';
import type { ObjectInfo, ObjectStorage } from '@cs/storage';
import { messages } from '../messages';
import { deleteUploadObject } from '../uploads/delete-upload-object';
import { decodeFilename, encodeFilename } from '../uploads/file-name';
import type { UploadRecord } from '../uploads/model';

/** Last-Modified in a HEAD is an HTTP date: whole seconds. */
const LAST_MODIFIED_PRECISION_MS = 1000;
/** The metadata a single-PUT link signs into its object. */
const OWNER = 'owner';
const DECLARED_SIZE = 'size';
const FILENAME = 'filename';

/**
 * What a link with size signs into its object: the owner, the size, and the name the file is
 * downloaded under (file-name.ts), which has no record before the claim.
 */
export function signedMetadata(ownerId: string, size: number, filename: string): Record<string, string> {
  return { [OWNER]: ownerId, [DECLARED_SIZE]: String(size), [FILENAME]: encodeFilename(filename) };
}

/** The file's name as a link with size signed it into the object; null for an object put before names were kept. */
export function signedFilename(object: ObjectInfo): string | null {
  return decodeFilename(object.metadata[FILENAME]) ?? null;
}

/** The owner a link with size signed into the object; undefined for any other object. */
export function signedOwner(object: ObjectInfo): string | undefined {
  return object.metadata[OWNER];
}

/**
 * Deletes an object whose size is not the one its link signed into it, or is over the limit: no
 * claim can ever take it. Returns whether it did.
 */
export async function deleteIfMisdeclared(
  { storage, logger, maxBytes }: { storage: ObjectStorage; logger: Logger; maxBytes: number },
  key: string,
  object: ObjectInfo,
): Promise<boolean> {
  if (object.metadata[DECLARED_SIZE] === String(object.size) && object.size <= maxBytes) return false;
  await deleteUploadObject(storage, key);
  logger.warn(
    { key, declared: object.metadata[DECLARED_SIZE], stored: object.size },
    'deleted an object of the wrong size',
  );
  return true;
}

/** Why an object put through a size-less link cannot be kept, if it cannot. */
export function ruleBroken(record: Pick<UploadRecord, 'contentType'>, object: ObjectInfo, maxBytes: number) {
  if (object.size > maxBytes) return messages.tooLarge;
  if (object.contentType !== record.contentType) return messages.wrongType;
  return undefined;
}

/**
 * Whether an object with no record is past its claim window for certain: a HEAD's Last-Modified
 * has whole seconds, so the put may have been up to a second later than it says.
 */
export function claimWindowPassed(object: ObjectInfo, claimTtlMs: number, now = Date.now()): boolean {
  return now - object.lastModified.getTime() >= claimTtlMs + LAST_MODIFIED_PRECISION_MS;
}

/**
 * An unclaimed object is deleted this long after the claim TTL has passed, and a claim refuses it
 * from the TTL on (at most a second later, `claimWindowPassed`): so a claim and the sweeper never
 * act on one object at once, even with clocks that differ by minutes.
 */
export function sweepMarginMs(claimTtlMs: number): number {
  return Math.max(LAST_MODIFIED_PRECISION_MS, Math.min(10 * 60_000, claimTtlMs));
}
