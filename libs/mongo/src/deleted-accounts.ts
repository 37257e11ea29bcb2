/**
 * Accounts deleted in identity, as one service knows them: a tombstone `{_id: userId, deletedAt}`
 * in its own database (`deleted_accounts`), written before the user's data is purged. A deleted
 * user's tokens are revoked too, but the revocation reaches each process within a second or so;
 * the tombstone refuses the user's writes from the moment the service is told (`@cs/koa`
 * refuseDeletedAccounts); every lookup is by `_id`, which every server answers from its index.
 */
import type { Connection } from 'mongoose';
import { isDuplicateKey } from './turns';

interface Tombstone {
  _id: string;
  deletedAt: Date;
}

/**
 * How long `isDeletedLately` trusts that an account was not deleted. A deletion is known at once
 * to the replica that carried it out, and to every other replica within this.
 */
export const NOT_DELETED_TRUSTED_MS = 5_000;
/** Answers kept at most; past it, the oldest go first. */
const KEPT_ANSWERS = 10_000;

export interface DeletedAccounts {
  /** One lookup by `_id`. */
  isDeleted(userId: string): Promise<boolean>;
  /**
   * The same, from a recent answer when there is one: a deletion for ever, a "not deleted" for
   * NOT_DELETED_TRUSTED_MS. For routes that write nothing to the database (signed links), where
   * a lookup per request would cost more than the route itself.
   */
  isDeletedLately(userId: string): Promise<boolean>;
  /** Deletes everything the user owns in this service. Idempotent. */
  purge(userId: string): Promise<void>;
  /**
   * The tombstone first, then the purge: any write that lands after the tombstone is refused or
   * undone by the middleware's second look, and any write before it is in what the purge finds.
   * Idempotent: a tombstone already there is a duplicate key, and the purge runs again.
   */
  deleteAccount(userId: string): Promise<void>;
}

export function createDeletedAccounts(
  connection: Connection,
  purgeData: (userId: string) => Promise<void>,
  {
    collectionName = 'deleted_accounts',
    trustNotDeletedMs = NOT_DELETED_TRUSTED_MS,
  }: { collectionName?: string; trustNotDeletedMs?: number } = {},
): DeletedAccounts {
  const tombstones = connection.collection<Tombstone>(collectionName);
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

  return {
    isDeleted,
    async isDeletedLately(userId) {
      const known = answers.get(userId);
      if (known && (known.deleted || Date.now() - known.at < trustNotDeletedMs)) return known.deleted;
      return isDeleted(userId);
    },
    purge: purgeData,
    async deleteAccount(userId) {
      remember(userId, true);
      try {
        await tombstones.insertOne({ _id: userId, deletedAt: new Date() });
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
      }
      await purgeData(userId);
    },
  };
}
