/** Tombstones of deleted accounts, against the run's real MongoDB-protocol server. */
import { setTimeout as sleep } from 'node:timers/promises';
import { newUserId, openTestDatabase, type TestDatabase } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createDeletedAccounts } from '../src/index';

let db: TestDatabase;

beforeAll(async () => {
  db = await openTestDatabase(__filename);
});
afterAll(async () => {
  await db.drop();
});

describe('createDeletedAccounts', () => {
  it('when an account is deleted, then its tombstone {_id, deletedAt} is written before its data is purged, and only it counts as deleted', async () => {
    const tombstones = db.connection.collection<{ _id: string; deletedAt: Date }>('deleted_accounts');
    const userId = newUserId();
    const seenByPurge: unknown[] = [];
    const accounts = createDeletedAccounts(db.connection, async (id) => {
      seenByPurge.push(await tombstones.findOne({ _id: id }));
    });

    expect(await accounts.isDeleted(userId)).toBe(false);
    await accounts.deleteAccount(userId);

    expect(seenByPurge).toEqual([{ _id: userId, deletedAt: expect.any(Date) }]);
    expect(await accounts.isDeleted(userId)).toBe(true);
    expect(await accounts.isDeleted(newUserId())).toBe(false);
  });

  it('when an account is deleted again, then the tombstone stays as it was and the purge runs again', async () => {
    const tombstones = db.connection.collection<{ _id: string; deletedAt: Date }>('deleted_accounts');
    const userId = newUserId();
    let purges = 0;
    const accounts = createDeletedAccounts(db.connection, async () => {
      purges += 1;
    });

    await accounts.deleteAccount(userId);
    const first = await tombstones.findOne({ _id: userId });
    await accounts.deleteAccount(userId);

    expect(await tombstones.findOne({ _id: userId })).toEqual(first);
    expect(purges).toBe(2);
  });

  it('when another replica deletes an account, then a recent "not deleted" answer holds only for the trust window; a deletion known here holds at once', async () => {
    const tombstones = db.connection.collection<{ _id: string; deletedAt: Date }>('deleted_accounts');
    const elsewhere = newUserId();
    const here = newUserId();
    const accounts = createDeletedAccounts(db.connection, async () => undefined, { trustNotDeletedMs: 1_500 });
    expect(await accounts.isDeletedLately(elsewhere)).toBe(false);
    expect(await accounts.isDeletedLately(here)).toBe(false);

    await tombstones.insertOne({ _id: elsewhere, deletedAt: new Date() }); // another replica's deletion
    await accounts.deleteAccount(here);

    expect(await accounts.isDeletedLately(here)).toBe(true);
    expect(await accounts.isDeletedLately(elsewhere)).toBe(false); // still inside the window
    await sleep(1_600);
    expect(await accounts.isDeletedLately(elsewhere)).toBe(true);
  });
});
