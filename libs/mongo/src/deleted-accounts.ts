/**
 * Accounts deleted in identity, as one service knows them: a tombstone `{_id: userId, deletedAt}`
 * in its own database (`deleted_accounts`), written before the user's data is purged. Tokens
 * cannot be revoked, so the tombstone is what refuses a deleted user's writes (`@cs/koa`
 * refuseDeletedAccounts); every lookup is by `_id`, which every server answers from its index.
 */
import type { Connection } from 'mongoose';
import { isDuplicateKey } from './turns';

interface Tombstone {
  _id: string;
  deletedAt: Date;
}

export interface DeletedAccounts {
  /** One lookup by `_id`. */
  isDeleted(userId: string): Promise<boolean>;
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
  collectionName = 'deleted_accounts',
): DeletedAccounts {
  const tombstones = connection.collection<Tombstone>(collectionName);
  return {
    async isDeleted(userId) {
      return (await tombstones.findOne({ _id: userId }, { projection: { _id: 1 } })) !== null;
    },
    purge: purgeData,
    async deleteAccount(userId) {
      try {
        await tombstones.insertOne({ _id: userId, deletedAt: new Date() });
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
      }
      await purgeData(userId);
    },
  };
}
