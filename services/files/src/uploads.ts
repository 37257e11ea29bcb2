/**
 * Uploads and their life: issue a signed PUT link; claim the uploaded object for a note; sign a
 * download link; release it (delete the object). The sweeper removes objects never claimed and
 * finishes releases that failed; the purge deletes a released key's object once more after every
 * link that could put it back has expired, then the record. Every state change of a record is its
 * next version, taken as a turn (records.ts).
 *
 * A link comes in two kinds:
 * - with `size` (what our clients send): the length, `If-None-Match: *`, the owner and the size are
 *   signed into the link, so storage takes nothing else and the object itself says whose it is.
 *   Issuing writes nothing; the record is written when the key is claimed (a unique index on the
 *   key lets one claim win). Objects never claimed have no record: the sweeper finds them by
 *   listing `uploads/`.
 * - without `size` (the contract's request): only the content type is signed, so storage takes any
 *   length up to its own 5 GB, as often as the link lasts. The link is recorded when it is issued
 *   (owner, content type, time) and takes one of the caller's bounded slots (link-slots.ts). The
 *   limit is enforced after the fact: the claim refuses and deletes an object over
 *   UPLOAD_MAX_BYTES or of another type, and once the link has expired (plus UPLOAD_CHECK_DELAY,
 *   for a PUT still arriving) the check looks at the key once more, claimed or not, and removes
 *   what breaks a rule. A removed object that a note held is an outbox entry: the note is told
 *   (removals.ts). So an object that breaks a rule lives at most UPLOAD_URL_TTL_S +
 *   UPLOAD_CHECK_DELAY + SWEEP_INTERVAL (6.5 minutes by default), plus one pass's work. A PUT
 *   still arriving when the check ran (storage checks a link's expiry when the request starts)
 *   lands later: the sweeper's listing of `uploads/` sees every object's size, and an over-limit
 *   one under a checked size-less key has its check made due again (one listing cycle later).
 */
import { HttpError } from '@cs/errors';
import type { Logger } from '@cs/log';
import { isDuplicateKey, sleep, trusted } from '@cs/mongo';
import type { ObjectInfo, ObjectStorage } from '@cs/storage';
import { counter } from '@cs/telemetry';
import type { LinkSlots } from './link-slots';
import type { UploadModel, UploadRecord, UploadState } from './model';
import type { Read, Records } from './records';
import { messages } from './schemas';
import { eachAtMost } from './sweep-pace';
import type { UnclaimedBudget } from './unclaimed-budget';
import type { UploadRequest } from './upload-input';
import { newUploadKey } from './upload-key';

export interface UploadSettings {
  uploadTtlS: number;
  downloadTtlS: number;
  claimTtlMs: number;
  /** How long a released record is kept after its last link expired, before the purge. */
  releasedRetentionMs: number;
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

/** What the sweeper removed, by kind; and its failures (a pass or one record that stopped on an error). */
export const sweeperRemoved = counter(
  'files_sweeper_removed_total',
  'What the sweeper removed: stale (issued keys never attached, and releases it finished), unclaimed (objects no record names, past the claim TTL, or put back under a released key), over_budget (uploads not yet attached released to bring an account within its budget), refused (objects of size-less links that broke a rule when checked after the link expired) and purged (released records past their retention).',
  ['kind'],
);
export const sweeperFailures = counter(
  'files_sweeper_failures_total',
  'Sweeper passes, or single records, that stopped on an error; the next pass retries them.',
);

/** How long a worker holds a record it is releasing before the sweeper may take it over. */
const LEASE_MS = 60_000;
/** Records the sweeper reads per query; each is then taken, or left to a replica that took it. */
const SWEEP_BATCH = 32;
/** How many times an abandon reads the record again after another writer took its turn. */
const ABANDON_TRIES = 6;
/** Last-Modified in a HEAD is an HTTP date: whole seconds. */
const LAST_MODIFIED_PRECISION_MS = 1000;
/** States whose key may still be put to by a size-less link, and so is checked once the link expires. */
const LIVE_STATES: UploadState[] = ['issued', 'attached'];
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

/** Why an object put through a size-less link cannot be kept, if it cannot. */
function ruleBroken(record: Pick<UploadRecord, 'contentType'>, object: ObjectInfo, maxBytes: number) {
  if (object.size > maxBytes) return messages.tooLarge;
  if (object.contentType !== record.contentType) return messages.wrongType;
  return undefined;
}

export function createUploads({
  model,
  records,
  slots,
  multipartSlots,
  budget,
  storage,
  settings,
  logger,
}: {
  model: UploadModel;
  records: Records;
  slots: LinkSlots;
  /** The slots of open multipart uploads (multipart.ts takes them; a release frees one). */
  multipartSlots: LinkSlots;
  budget: UnclaimedBudget;
  storage: ObjectStorage;
  settings: UploadSettings;
  logger: Logger;
}) {
  const { read, owned, advance } = records;

  /**
   * A claim of an object a single-PUT link put there, with no record yet: its signed metadata
   * names the owner and the declared size. The record is written as attached; a second claim, or
   * the sweeper recording the object meanwhile (`adopt`), meets the unique key: undefined, and
   * the claim goes on through the record.
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
      if (isDuplicateKey(err)) return undefined;
      throw err;
    }
    return { key, contentType, size: object.size };
  }

  /**
   * An object a single-PUT link put, seen by the sweeper with no record: recorded as issued to
   * the owner its link signed into it, so that it counts in the owner's budget
   * (unclaimed-budget.ts) and is claimed, swept and released as any other issued key. A claim
   * that wrote its record first wins the unique key, and the object is then simply attached.
   * Returns whether the object was deleted (its size is not the one signed: no claim can take it).
   */
  async function adopt(key: string): Promise<boolean> {
    const object = await storage.headObject(key);
    const ownerId = object?.metadata[OWNER];
    // Not put through a link with size (those are recorded at issue): left to the claim TTL.
    if (!object || !ownerId) return false;
    if (object.metadata[DECLARED_SIZE] !== String(object.size) || object.size > settings.maxBytes) {
      await storage.deleteObject(key);
      logger.warn(
        { key, declared: object.metadata[DECLARED_SIZE], stored: object.size },
        'deleted an object of the wrong size',
      );
      return true;
    }
    try {
      await model.create({
        key,
        ownerId,
        contentType: object.contentType ?? 'application/octet-stream',
        size: object.size,
        state: 'issued',
        issuedAt: object.lastModified,
      });
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
    }
    return false;
  }

  /**
   * Takes a record into `releasing` (with a lease, and `why` if given), aborts its multipart
   * upload if it has one, deletes its object, and marks it released.
   */
  async function releaseNow(record: Read, why: Partial<UploadRecord> = {}): Promise<boolean> {
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
    // Not freed, the slot frees itself when the sweeper would have released the upload anyway.
    if (taken.multipart) await multipartSlots.free(taken.ownerId, taken.key).catch(() => undefined);
    return true;
  }

  /**
   * Over-limit objects the listing found under size-less keys already checked: a PUT begun while
   * its link was valid that was still arriving when the check ran (S3 checks a link's expiry when
   * the request starts). Their check is due again, now.
   */
  async function recheckLate(overLimit: string[]): Promise<void> {
    if (overLimit.length === 0) return;
    const late = await model
      .find(
        { key: trusted({ $in: overLimit }), size: null, checkAfter: null, state: trusted({ $in: LIVE_STATES }) },
        'key',
      )
      .lean<Pick<UploadRecord, 'key'>[]>();
    for (const { key } of late) {
      const record = await read(key);
      if (record && !record.checkAfter) await advance(record, { checkAfter: new Date() });
    }
  }

  return {
    async issue(ownerId: string, { contentType, filename, size }: UploadRequest): Promise<IssuedUpload> {
      budget.refuse(ownerId, size ?? settings.maxBytes);
      await storage.assertReachable();
      const key = newUploadKey(filename);
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
      const metadata = { [OWNER]: ownerId, [DECLARED_SIZE]: String(size) };
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
        // Recorded since the read: by a claim alongside, or by the sweeper (`adopt`).
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
        await storage.deleteObject(key);
        logger.warn(
          { key, declared: record.size, stored: object.size, type: object.contentType },
          'deleted an object that broke an upload rule',
        );
        throw new HttpError(409, broken);
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
      const url = await storage.signGet(key, { expiresIn: settings.downloadTtlS, contentType: record.contentType });
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
        if (record.state === 'releasing' && record.lockedUntil.getTime() > Date.now()) return;
        if (await releaseNow(record)) return;
        // Another writer took the record's turn: its write lands within moments.
        await sleep(Math.min(10 * 2 ** attempt, 200) * (0.5 + Math.random()));
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
      if (record.state === 'releasing' && record.lockedUntil.getTime() > Date.now()) return;
      await releaseNow(record);
    },

    /**
     * Keys issued longer ago than the claim TTL and never attached, and releases whose lease ran
     * out, until none is due (sweep-pace.ts). Replicas that sweep at once read the same records,
     * and each record goes to the one that takes its turn. A storage failure ends the pass: the
     * next one retries.
     */
    async sweep(): Promise<number> {
      let released = 0;
      for (;;) {
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
        try {
          await eachAtMost(due, async (record) => {
            if (await releaseNow({ ...record, readAt })) taken += 1;
          });
        } catch (err) {
          sweeperFailures.inc();
          logger.warn({ err }, 'sweeper could not delete an object; will retry');
          return released + taken;
        }
        released += taken;
        // Nothing due, or every record due was taken by another replica: this pass is done.
        if (taken === 0) return released;
      }
    },

    /**
     * Keys of size-less links whose link has expired (and the check delay passed), until none is
     * due: the object can no longer change, so it is looked at once more, claimed or not. One that
     * breaks a rule is deleted; if a note holds it, the record says why and that the note is still
     * to be told (removals.ts), before the delete. Replicas that check at once take each record in turn.
     */
    async checkExpiredLinks(): Promise<{ checked: number; refused: number }> {
      let refused = 0;
      let checked = 0;
      for (;;) {
        const due = await model
          .find({ checkAfter: trusted({ $lte: new Date() }), state: trusted({ $in: LIVE_STATES }) }, 'key')
          .limit(SWEEP_BATCH)
          .lean<Pick<UploadRecord, 'key'>[]>();
        let taken = 0;
        await eachAtMost(due, async ({ key }) => {
          // Storage first, so the read is followed by the record's turn at once (as in a claim).
          const object = await storage.headObject(key);
          const record = await read(key);
          if (!record?.checkAfter || (record.state !== 'issued' && record.state !== 'attached')) return;
          const broken = object && ruleBroken(record, object, settings.maxBytes);
          const done = broken
            ? await releaseNow(record, {
                checkAfter: null,
                removedReason: broken,
                notesToTell: record.state === 'attached',
              })
            : Boolean(await advance(record, { checkAfter: null }));
          if (!done) return;
          taken += 1;
          checked += 1;
          if (broken) {
            logger.warn({ key, stored: object?.size, type: object?.contentType, state: record.state }, broken);
            refused += 1;
          }
        });
        if (taken === 0) return { checked, refused };
      }
    },

    /**
     * The whole listing of `uploads/`, a page of 1,000 objects at a time:
     * - an object that no record names is recorded (`adopt`) so that its owner's budget counts it,
     *   (within the claim TTL), or, once older than the claim TTL and its margin, deleted (put there
     *   and never claimed);
     * - an object under a released key was put back by a link still valid at the release: deleted
     *   again (no claim can take a released key);
     * - an over-limit object of a size-less key that landed after its check: checked again at the
     *   next `checkExpiredLinks`.
     * Replicas may delete or record the same object: deleting is idempotent, and one record wins
     * the unique key.
     */
    async sweepUnclaimed(): Promise<number> {
      let deleted = 0;
      let after: string | undefined;
      do {
        const { objects, next } = await storage.listObjects('uploads/', { after });
        after = next;
        await recheckLate(objects.filter((o) => o.size > settings.maxBytes).map((o) => o.key));
        const now = Date.now();
        const cutoff = now - settings.claimTtlMs - sweepMarginMs(settings.claimTtlMs);
        // Past the claim TTL a claim refuses an unrecorded object (claimUnrecorded): not recorded then.
        const adoptable = now - settings.claimTtlMs;
        const known = await model
          .find({ key: trusted({ $in: objects.map((o) => o.key) }) }, 'key state')
          .lean<Pick<UploadRecord, 'key' | 'state'>[]>();
        const stateOf = new Map(known.map((r) => [r.key, r.state]));
        await eachAtMost(objects, async ({ key, lastModified }) => {
          const state = stateOf.get(key);
          if (state === 'released' || (!state && lastModified.getTime() < cutoff)) {
            await storage.deleteObject(key);
            deleted += 1;
          } else if (!state && lastModified.getTime() > adoptable && (await adopt(key))) {
            deleted += 1;
          }
        });
      } while (after);
      return deleted;
    },

    /**
     * Every account cut back to its bounds on uploads not yet attached (unclaimed-budget.ts): its
     * oldest ones are released until it is within them. A record a claim attached meanwhile stays
     * attached (its turn was taken first), and the account holds that much less.
     */
    async enforceBudget(): Promise<number> {
      let released = 0;
      for (const ownerId of await budget.measure()) {
        const excess = await budget.excessOf(ownerId);
        await eachAtMost(excess, async ({ key }) => {
          const record = await read(key);
          if (record?.state === 'issued' && (await releaseNow(record))) released += 1;
        });
        logger.warn({ ownerId, over: excess.length }, 'released uploads over the account budget');
      }
      return released;
    },

    /**
     * The owner's account was deleted: every record of theirs, whatever its state, goes with its
     * object; a multipart upload is aborted first, so no part still coming can be joined after the
     * delete (a completed one has nothing to abort). A worker holding a record meanwhile finds it
     * gone and writes nothing. Objects put through a link and not yet recorded by the sweeper have
     * no owner here: they stay until the sweeper deletes them, UPLOAD_CLAIM_TTL and its margin after
     * their upload (sweepUnclaimed), as it does any unclaimed object; so does an object that a link
     * still valid now puts back later. A record goes after its object, so a failure leaves it for
     * the next call: identity calls again until it gets a 204.
     */
    async removeAllOf(ownerId: string): Promise<void> {
      await slots.removeAllOf(ownerId);
      await multipartSlots.removeAllOf(ownerId);
      const owned = await model.find({ ownerId }, 'key multipart').lean<Pick<UploadRecord, 'key' | 'multipart'>[]>();
      for (const { key, multipart } of owned) {
        if (multipart) await storage.abortMultipartUpload(key, multipart.storageUploadId);
        await storage.deleteObject(key);
        await model.deleteOne({ key });
      }
    },

    /**
     * Released records past their retention, until none is due: their key's object is deleted
     * once more (a link still valid at the release could have put it back), then the record.
     * Replicas may do the same record at once: both steps are idempotent, and a released record
     * never changes.
     */
    async purge(): Promise<number> {
      let purged = 0;
      for (;;) {
        const due = await model
          .find({
            $or: [
              { state: 'released', purgeAfter: trusted({ $lte: new Date() }) },
              // Released before purge times were recorded.
              { state: 'released', purgeAfter: null },
            ],
            // A note still to be told of its removed attachment keeps the record (removals.ts).
            notesToTell: trusted({ $ne: true }),
          })
          .limit(SWEEP_BATCH)
          .lean<UploadRecord[]>();
        await eachAtMost(due, async ({ key }) => {
          await storage.deleteObject(key);
          await model.deleteOne({ key, state: 'released' });
        });
        purged += due.length;
        if (due.length < SWEEP_BATCH) return purged;
      }
    },
  };
}

export type Uploads = ReturnType<typeof createUploads>;
