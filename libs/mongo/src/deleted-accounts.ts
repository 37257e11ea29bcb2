/**
 * Accounts deleted in identity, as one service knows them: a tombstone `{_id: userId, deletedAt}`
 * in its own database (`deleted_accounts`), written before the user's data is purged. A deleted
 * user's tokens are revoked too, but the revocation reaches each process within a second or so;
 * the tombstone refuses the user's writes from the moment the service is told (`@cs/koa`
 * refuseDeletedAccounts); every lookup is by `_id`, which every server answers from its index.
 *
 * A write must never outlive the purge, and must not pay a lookup for it either (each is a few
 * milliseconds of CPU on FerretDB, and every write would pay two). So a write looks from memory
 * (`isDeletedLately`: a "not deleted" is trusted for NOT_DELETED_TRUSTED_MS), and what slips
 * through in that window is caught by time:
 * - a write answered within LOOK_AGAIN_AFTER_MS of its look landed before
 *   `deletedAt + NOT_DELETED_TRUSTED_MS + LOOK_AGAIN_AFTER_MS`: the tombstone carries a second
 *   purge after that (`purgeAgainAt`, with a margin for clocks), which `purgeAgain` carries out,
 *   in whichever replica runs it first, after a crash too;
 * - a slower write looks the tombstone up once more after it (`deletedSince`), and is purged then.
 */
import { repeatEvery } from '@cs/lifecycle';
import type { Logger } from '@cs/log';
import type { Connection } from 'mongoose';
import { claimedByInsert } from './unique-key';

interface Tombstone {
  _id: string;
  deletedAt: Date;
  /** When the second purge is due; gone once it is done. */
  purgeAgainAt?: Date;
}

/**
 * How long `isDeletedLately` trusts that an account was not deleted. A deletion is known at once
 * to the replica that carried it out, and to every other replica within this.
 */
export const NOT_DELETED_TRUSTED_MS = 5_000;
/** A write answered later than this after its look looks the tombstone up again. */
export const LOOK_AGAIN_AFTER_MS = 10_000;
/** Slack for the clocks of replicas on different machines, and for the purge's own time. */
const CLOCK_MARGIN_MS = 5_000;
/** How often due second purges are looked for. */
export const PURGE_AGAIN_EVERY_MS = 5_000;
/** Tombstones whose second purge is due, handled per pass at most. */
const PURGES_PER_PASS = 100;
/** Answers kept at most; past it, the oldest go first. */
const KEPT_ANSWERS = 10_000;

export interface DeletedAccounts {
  /** One lookup by `_id`. */
  isDeleted(userId: string): Promise<boolean>;
  /**
   * The same, from a recent answer when there is one: a deletion for ever, a "not deleted" for
   * NOT_DELETED_TRUSTED_MS. A write's first look.
   */
  isDeletedLately(userId: string): Promise<boolean>;
  /**
   * After a write whose look (`isDeletedLately`) was at `lookedAt`: whether the account is deleted
   * now and the write must go. Known here: at once. Otherwise, a write answered within
   * LOOK_AGAIN_AFTER_MS is left to the second purge, and a slower one looks the tombstone up.
   */
  deletedSince(userId: string, lookedAt: number): Promise<boolean>;
  /** Deletes everything the user owns in this service. Idempotent. */
  purge(userId: string): Promise<void>;
  /**
   * The tombstone first, with its second purge due, then the purge: a write that slipped past a
   * look before the tombstone is in what one of the two purges finds. Idempotent: a tombstone
   * already there is a duplicate key, and the purge runs again.
   */
  deleteAccount(userId: string): Promise<void>;
  /** Carries out the second purges that are due; how many. Run every PURGE_AGAIN_EVERY_MS. */
  purgeAgain(): Promise<number>;
  /** Runs `purgeAgain` every PURGE_AGAIN_EVERY_MS, a failed pass logged, until the returned stop. */
  startPurgingAgain(logger: Pick<Logger, 'warn'>): () => Promise<void>;
}

/**
 * The tombstones of a service's database, their index made first: the collection exists once the
 * service is ready, not from the first pass of the second purge.
 */
export async function createDeletedAccounts(
  connection: Connection,
  purgeData: (userId: string) => Promise<void>,
  {
    collectionName = 'deleted_accounts',
    trustNotDeletedMs = NOT_DELETED_TRUSTED_MS,
  }: { collectionName?: string; trustNotDeletedMs?: number } = {},
): Promise<DeletedAccounts> {
  const tombstones = connection.collection<Tombstone>(collectionName);
  await tombstones.createIndex({ purgeAgainAt: 1 }); // the second purge's query
  /** userId → whether deleted, and since when that answer is known (Map order: oldest first). */
  const answers = new Map<string, { deleted: boolean; at: number }>();
  const remember = (userId: string, deleted: boolean) => {
    answers.delete(userId);
    answers.set(userId, { deleted, at: Date.now() });
    if (answers.size > KEPT_ANSWERS) answers.delete(answers.keys().next().value as string);
  };

  const isDeleted = async (userId: string) => {
    const deleted = (await tombstones.findOne({ _id: userId }, { projection: { _id: 1 } })) !== null;
    remember(userId, deleted);
    return deleted;
  };

  const purgeAgain = async () => {
    const due = await tombstones
      .find({ purgeAgainAt: { $lte: new Date() } }, { projection: { _id: 1 } })
      .limit(PURGES_PER_PASS)
      .toArray();
    for (const { _id } of due) {
      await purgeData(_id);
      // Two replicas may both purge: the purge is idempotent, and nobody else writes a tombstone.
      await tombstones.updateOne({ _id }, { $unset: { purgeAgainAt: 1 } });
    }
    return due.length;
  };

  return {
    isDeleted,
    async isDeletedLately(userId) {
      const known = answers.get(userId);
      if (known && (known.deleted || Date.now() - known.at < trustNotDeletedMs)) return known.deleted;
      return isDeleted(userId);
    },
    async deletedSince(userId, lookedAt) {
      if (answers.get(userId)?.deleted) return true;
      if (Date.now() - lookedAt < LOOK_AGAIN_AFTER_MS) return false;
      return isDeleted(userId);
    },
    purge: purgeData,
    async deleteAccount(userId) {
      remember(userId, true);
      const deletedAt = Date.now();
      const purgeAgainAt = new Date(deletedAt + trustNotDeletedMs + LOOK_AGAIN_AFTER_MS + CLOCK_MARGIN_MS);
      // One there already is the same deletion's: its data is purged again below all the same.
      await claimedByInsert(() => tombstones.insertOne({ _id: userId, deletedAt: new Date(deletedAt), purgeAgainAt }));
      await purgeData(userId);
    },
    purgeAgain,
    startPurgingAgain: (logger) =>
      repeatEvery(PURGE_AGAIN_EVERY_MS, purgeAgain, (err) =>
        logger.warn({ err }, 'second purge of deleted accounts failed; will retry'),
      ),
  };
}
