/**
 * An upload's life as its owner and the notes service see it: issue a signed PUT link; claim the
 * uploaded object for a note; sign a download link; release it (delete the object), or abandon it
 * before any note holds it. Every state change of a record is its next version, taken as a turn
 * (records.ts). What no request finishes is the sweeper's (sweeper.ts); a deleted account's
 * uploads go with account-purge.ts.
 *
 * A link comes in two kinds:
 * - with `size` (what our clients send): the length, `If-None-Match: *`, the owner and the size are
 *   signed into the link, so storage takes nothing else and the object itself says whose it is
 *   (object-rules.ts). Issuing writes nothing; the record is written when the key is claimed (a
 *   unique index on the key lets one claim win). Objects never claimed have no record: the sweeper
 *   finds them by listing `uploads/`.
 * - without `size` (the contract's request): only the content type is signed, so storage takes any
 *   length up to its own 5 GB, as often as the link lasts. The link is recorded when it is issued
 *   (owner, content type, time) and takes one of the caller's bounded slots (link-slots.ts). The
 *   limit is enforced after the fact: the claim refuses and deletes an object over
 *   UPLOAD_MAX_BYTES or of another type, and the sweeper checks the key once more after the link
 *   has expired.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { HttpError } from '@cs/errors';
import type { Logger } from '@cs/log';
import { claimedByInsert, raceBackoffMs } from '@cs/mongo';
import type { ObjectInfo, ObjectStorage } from '@cs/storage';
import type { LinkSlots } from '../links/link-slots';
import {
  claimWindowPassed,
  deleteIfMisdeclared,
  ruleBroken,
  signedFilename,
  signedMetadata,
  signedOwner,
} from '../links/object-rules';
import type { UnclaimedBudget } from '../links/unclaimed-budget';
import { messages } from '../messages';
import { deleteUploadObject } from './delete-upload-object';
import { displayFilename, filenameOf } from './file-name';
import type { UploadModel } from './model';
import type { Records } from './records';
import { beingReleased, type Release } from './release';
import type { UploadRequest } from './upload-input';
import { newUploadKey } from './upload-key';

export interface UploadSettings {
  uploadTtlS: number;
  downloadTtlS: number;
  claimTtlMs: number;
  /** The largest single-PUT object; an object put through a size-less link is held to it. */
  maxBytes: number;
  /** How long after a size-less link expires its key is checked (a PUT may still be arriving). */
  checkDelayMs: number;
}

export interface IssuedUpload {
  url: string;
  key: string;
  /** Exactly the headers the client must send with its PUT. */
  headers: Record<string, string>;
  expiresIn: number;
}

/** How many times an abandon reads the record again after another writer took its turn. */
const ABANDON_TRIES = 6;

export function createUploads({
  model,
  records,
  release: releaseNow,
  slots,
  budget,
  storage,
  settings,
  logger,
}: {
  model: UploadModel;
  records: Records;
  release: Release;
  slots: LinkSlots;
  budget: UnclaimedBudget;
  storage: ObjectStorage;
  settings: UploadSettings;
  logger: Logger;
}) {
  const { read, owned, advance } = records;

  /**
   * A claim of an object a single-PUT link put there, with no record yet: its signed metadata
   * names the owner and the declared size. The record is written as attached; a second claim, or
   * the sweeper recording the object meanwhile (sweeper.ts `adopt`), meets the unique key:
   * undefined, and the claim goes on through the record.
   */
  async function claimUnrecorded(ownerId: string, key: string, object: ObjectInfo | undefined) {
    if (!object) throw new HttpError(409, messages.notUploaded);
    if (signedOwner(object) !== ownerId) throw new HttpError(404, messages.uploadNotFound);
    if (await deleteIfMisdeclared({ storage, logger, maxBytes: settings.maxBytes }, key, object)) {
      throw new HttpError(409, messages.wrongSize);
    }
    // The sweeper's margin (object-rules.ts) keeps it away from an object still claimable.
    if (claimWindowPassed(object, settings.claimTtlMs)) throw new HttpError(409, messages.claimExpired);
    const contentType = object.contentType ?? 'application/octet-stream';
    const filename = signedFilename(object);
    const recorded = await claimedByInsert(() =>
      model.create({
        key,
        ownerId,
        contentType,
        filename,
        size: object.size,
        state: 'attached',
        issuedAt: object.lastModified,
        attachedAt: new Date(),
      }),
    );
    if (!recorded) return undefined;
    return { key, contentType, size: object.size, filename: filenameOf({ key, filename }) };
  }

  return {
    async issue(ownerId: string, { contentType, filename, size }: UploadRequest): Promise<IssuedUpload> {
      budget.refuse(ownerId, size ?? settings.maxBytes);
      await storage.assertReachable();
      const key = newUploadKey(filename);
      const name = displayFilename(filename);
      const expiresIn = settings.uploadTtlS;
      if (size === undefined) {
        const issuedAt = new Date();
        const expiresAt = new Date(issuedAt.getTime() + expiresIn * 1000);
        // The slot and the record at once: a refused slot takes its record back (never handed out).
        const [slot, record] = await Promise.allSettled([
          slots.take(ownerId, key, expiresAt),
          model.create({
            key,
            ownerId,
            contentType,
            filename: name,
            size: null,
            state: 'issued',
            issuedAt,
            checkAfter: new Date(expiresAt.getTime() + settings.checkDelayMs),
          }),
        ]);
        if (slot.status === 'rejected') {
          if (record.status === 'fulfilled') await model.deleteOne({ key });
          throw slot.reason;
        }
        if (record.status === 'rejected') throw record.reason;
        return { ...(await storage.signPut(key, { contentType, expiresIn })), key, expiresIn };
      }
      const metadata = signedMetadata(ownerId, size, name);
      const link = await storage.signPut(key, { contentType, size, metadata, expiresIn });
      return { ...link, key, expiresIn };
    },

    /**
     * The key was issued to this caller, is not yet attached, and its object is in storage with
     * exactly the size declared, or (a size-less link) within the limit and of the type issued.
     * Any other object is deleted (the key stays claimable by a right one while its link lasts).
     */
    async claim(ownerId: string, key: string) {
      // Storage first, so the read below is followed by the record's turn at once.
      const object = await storage.headObject(key);
      let record = await read(key);
      if (!record) {
        const claimed = await claimUnrecorded(ownerId, key, object);
        if (claimed) return claimed;
        // Recorded since the read: by a claim alongside, or by the sweeper (sweeper.ts `adopt`).
        record = await read(key);
        if (!record) throw new HttpError(409, messages.notClaimable);
      }
      if (record.ownerId !== ownerId) throw new HttpError(404, messages.uploadNotFound);
      if (record.state !== 'issued') throw new HttpError(409, messages.notClaimable);
      if (!object) throw new HttpError(409, messages.notUploaded);
      const broken =
        record.size === null
          ? ruleBroken(record, object, settings.maxBytes)
          : object.size === record.size
            ? undefined
            : messages.wrongSize;
      if (broken) {
        await deleteUploadObject(storage, key);
        logger.warn(
          { key, declared: record.size, stored: object.size, type: object.contentType },
          'deleted an object that broke an upload rule',
        );
        throw new HttpError(409, broken);
      }
      if (!(await advance(record, { state: 'attached', attachedAt: new Date() }))) {
        throw new HttpError(409, messages.notClaimable);
      }
      return { key, contentType: record.contentType, size: object.size, filename: filenameOf(record) };
    },

    /** A GET link for an attached object of the caller's; 404 when the object is gone. */
    async signDownload(ownerId: string, key: string) {
      const record = await owned(ownerId, key);
      if (record.state !== 'attached') throw new HttpError(404, messages.uploadNotFound);
      if (!(await storage.headObject(key))) throw new HttpError(404, 'File not found');
      const url = await storage.signGet(key, {
        expiresIn: settings.downloadTtlS,
        contentType: record.contentType,
        filename: filenameOf(record),
      });
      return { url, expiresIn: settings.downloadTtlS };
    },

    /**
     * Removes an upload of the caller's that no note holds (a multipart upload its owner aborts):
     * 409 once a note holds it. The state that allows it is the one the release's turn is taken
     * from, so a claim racing it either took the record first (409 here) or finds it releasing
     * (409 there); a lost turn reads again. Done already, or being done by another worker: 204.
     */
    async abandon(ownerId: string, key: string): Promise<void> {
      for (let attempt = 1; attempt <= ABANDON_TRIES; attempt++) {
        const record = await owned(ownerId, key);
        if (record.state === 'attached') throw new HttpError(409, messages.uploadAttached);
        if (record.state === 'released') return;
        if (beingReleased(record)) return;
        if (await releaseNow(record)) return;
        // Another writer took the record's turn: its write lands within moments.
        await sleep(raceBackoffMs(attempt));
      }
      throw new HttpError(409, messages.uploadBusy);
    },

    /**
     * Idempotent: a key already released, unknown, or not the caller's is nothing to do, and so
     * is one that another worker is releasing now (the sweeper finishes it if that worker fails).
     */
    async release(ownerId: string, key: string): Promise<void> {
      const record = await read(key);
      if (!record || record.ownerId !== ownerId || record.state === 'released') return;
      if (beingReleased(record)) return;
      await releaseNow(record);
    },
  };
}

export type Uploads = ReturnType<typeof createUploads>;
