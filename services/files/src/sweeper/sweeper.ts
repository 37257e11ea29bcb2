/**
 * The sweeper: what no request finishes. It releases keys issued and never attached within the
 * claim TTL, and releases whose worker's lease ran out; it lists `uploads/` to record objects that
 * links with size put there (so their owner's budget counts them) and to delete those never claimed
 * or put back under a released key; it cuts every account back to its budget; it checks a size-less
 * link's key once the link has expired; and it purges released records past their retention.
 *
 * A size-less link's object is held to its rules after the fact: once the link has expired (plus
 * UPLOAD_CHECK_DELAY, for a PUT still arriving) the key is looked at once more, claimed or not, and
 * what breaks a rule is removed. A removed object that a note held is an outbox entry: the note is
 * told (removals.ts). So an object that breaks a rule lives at most UPLOAD_URL_TTL_S +
 * UPLOAD_CHECK_DELAY + SWEEP_INTERVAL (6.5 minutes by default), plus one pass's work. A PUT still
 * arriving when the check ran (storage checks a link's expiry when the request starts) lands later:
 * the listing of `uploads/` sees every object's size, and an over-limit one under a checked
 * size-less key has its check made due again (one listing cycle later).
 *
 * Each step goes on until none of its work is due (sweep-pace.ts). Replicas that sweep at once read
 * the same records, and each record goes to the one that takes its turn (records.ts).
 */
import type { Logger } from '@cs/log';
import { claimedByInsert, trusted } from '@cs/mongo';
import type { ObjectStorage } from '@cs/storage';
import { counter } from '@cs/telemetry';
import { deleteIfMisdeclared, ruleBroken, signedFilename, signedOwner, sweepMarginMs } from '../links/object-rules';
import type { UnclaimedBudget } from '../links/unclaimed-budget';
import type { Removals } from '../removals/removals';
import { deleteUploadObject } from '../uploads/delete-upload-object';
import type { UploadModel, UploadRecord, UploadState } from '../uploads/model';
import type { Records } from '../uploads/records';
import type { Release } from '../uploads/release';
import { UPLOAD_KEY_PREFIX } from '../uploads/upload-key';
import { eachAtMost } from './sweep-pace';

export interface SweeperSettings {
  /** How long an issued key may stay unattached. */
  claimTtlMs: number;
  /** The largest single-PUT object; an object put through a size-less link is held to it. */
  maxBytes: number;
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

/** Records the sweeper reads per query; each is then taken, or left to a replica that took it. */
const SWEEP_BATCH = 32;
/** States whose key may still be put to by a size-less link, and so is checked once the link expires. */
const LIVE_STATES: UploadState[] = ['issued', 'attached'];

export function createSweeper({
  model,
  records,
  release,
  removals,
  budget,
  storage,
  settings,
  logger,
}: {
  model: UploadModel;
  records: Records;
  release: Release;
  removals: Removals;
  budget: UnclaimedBudget;
  storage: ObjectStorage;
  settings: SweeperSettings;
  logger: Logger;
}) {
  const { read, advance } = records;

  /**
   * An object a single-PUT link put, seen with no record: recorded as issued to the owner its link
   * signed into it, so that it counts in the owner's budget (unclaimed-budget.ts) and is claimed,
   * swept and released as any other issued key. A claim that wrote its record first wins the
   * unique key, and the object is then simply attached. Returns whether the object was deleted
   * (its size is not the one signed: no claim can take it).
   */
  async function adopt(key: string): Promise<boolean> {
    const object = await storage.headObject(key);
    const ownerId = object && signedOwner(object);
    // Not put through a link with size (those are recorded at issue): left to the claim TTL.
    if (!object || !ownerId) return false;
    if (await deleteIfMisdeclared({ storage, logger, maxBytes: settings.maxBytes }, key, object)) return true;
    // Taken already: by a claim, which attached it.
    await claimedByInsert(() =>
      model.create({
        key,
        ownerId,
        contentType: object.contentType ?? 'application/octet-stream',
        filename: signedFilename(object),
        size: object.size,
        state: 'issued',
        issuedAt: object.lastModified,
      }),
    );
    return false;
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
    /**
     * Keys issued longer ago than the claim TTL and never attached, and releases whose lease ran
     * out. A storage failure ends the pass: the next one retries.
     */
    async releaseStale(): Promise<number> {
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
            if (await release({ ...record, readAt })) taken += 1;
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
     * Keys of size-less links whose link has expired (and the check delay passed): the object can
     * no longer change, so it is looked at once more, claimed or not. One that breaks a rule is
     * deleted, and the record says why; if a note holds it, the note is told (removals.ts).
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
          // A note holds an attached key: the entry that tells it is written first (removals.ts).
          const notice =
            broken && record.state === 'attached' ? await removals.announce(key, record.ownerId, broken) : undefined;
          const done = broken
            ? await release(record, { checkAfter: null, removedReason: broken })
            : Boolean(await advance(record, { checkAfter: null }));
          if (notice) removals.tellSoon(notice);
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
     * the unique key. A record's own object is deleted once, by its release.
     */
    async sweepUnclaimed(): Promise<number> {
      let deleted = 0;
      let after: string | undefined;
      do {
        const { objects, next } = await storage.listObjects(UPLOAD_KEY_PREFIX, { after });
        after = next;
        await recheckLate(objects.filter((o) => o.size > settings.maxBytes).map((o) => o.key));
        const now = Date.now();
        const cutoff = now - settings.claimTtlMs - sweepMarginMs(settings.claimTtlMs);
        // Past the claim TTL a claim refuses an unrecorded object (claimWindowPassed): not recorded then.
        const adoptable = now - settings.claimTtlMs;
        const known = await model
          .find({ key: trusted({ $in: objects.map((o) => o.key) }) }, 'key state')
          .lean<Pick<UploadRecord, 'key' | 'state'>[]>();
        const stateOf = new Map(known.map((r) => [r.key, r.state]));
        await eachAtMost(objects, async ({ key, lastModified }) => {
          const state = stateOf.get(key);
          if (state === 'released') {
            // The release deleted the object before it wrote `released`, so a listing taken before
            // that may still name it: only an object put back since is there to delete.
            if (!(await storage.headObject(key))) return;
            await deleteUploadObject(storage, key);
            deleted += 1;
          } else if (!state && lastModified.getTime() < cutoff) {
            await deleteUploadObject(storage, key);
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
          if (record?.state === 'issued' && (await release(record))) released += 1;
        });
        logger.warn({ ownerId, over: excess.length }, 'released uploads over the account budget');
      }
      return released;
    },

    /**
     * Released records past their retention: their key's object is deleted once more (a link still
     * valid at the release could have put it back), then the record. Replicas may do the same
     * record at once: both steps are idempotent, and a released record never changes.
     */
    async purgeReleased(): Promise<number> {
      let purged = 0;
      for (;;) {
        const due = await model
          .find({
            $or: [
              { state: 'released', purgeAfter: trusted({ $lte: new Date() }) },
              // Released before purge times were recorded.
              { state: 'released', purgeAfter: null },
            ],
          })
          .limit(SWEEP_BATCH)
          .lean<UploadRecord[]>();
        await eachAtMost(due, async ({ key }) => {
          await deleteUploadObject(storage, key);
          await model.deleteOne({ key, state: 'released' });
        });
        purged += due.length;
        if (due.length < SWEEP_BATCH) return purged;
      }
    },
  };
}

export type Sweeper = ReturnType<typeof createSweeper>;
