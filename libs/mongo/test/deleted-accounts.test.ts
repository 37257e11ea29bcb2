/** Tombstones of deleted accounts, against the run's real MongoDB-protocol server. */
import { setTimeout as sleep } from 'node:timers/promises';
import { eventually, newUserId, openTestDatabase, type TestDatabase } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { LOOK_AGAIN_AFTER_MS, PURGE_AGAIN_EVERY_MS } from '../src/deleted-accounts';
import { createDeletedAccounts } from '../src/index';

let db: TestDatabase;

beforeAll(async () => {
  db = await openTestDatabase(__filename);
});
afterAll(async () => {
  await db.drop();
});

describe('createDeletedAccounts', () => {
  it('when an account is deleted, then its tombstone {_id, deletedAt, purgeAgainAt} is written before its data is purged, and only it counts as deleted', async () => {
    const tombstones = db.connection.collection<{ _id: string; deletedAt: Date }>('deleted_accounts');
    const userId = newUserId();
    const seenByPurge: unknown[] = [];
    const accounts = await createDeletedAccounts(db.connection, async (id) => {
      seenByPurge.push(await tombstones.findOne({ _id: id }));
    });

    expect(await accounts.isDeleted(userId)).toBe(false);
    await accounts.deleteAccount(userId);

    expect(seenByPurge).toEqual([{ _id: userId, deletedAt: expect.any(Date), purgeAgainAt: expect.any(Date) }]);
    expect(await accounts.isDeleted(userId)).toBe(true);
    expect(await accounts.isDeleted(newUserId())).toBe(false);
  });

  it('when an account is deleted again, then the tombstone stays as it was and the purge runs again', async () => {
    const tombstones = db.connection.collection<{ _id: string; deletedAt: Date }>('deleted_accounts');
    const userId = newUserId();
    let purges = 0;
    const accounts = await createDeletedAccounts(db.connection, async () => {
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
    const accounts = await createDeletedAccounts(db.connection, async () => undefined, { trustNotDeletedMs: 1_500 });
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

describe('the second purge', () => {
  it('when an account is deleted, then its tombstone carries a second purge, which runs once due and only then, and is done once', async () => {
    const tombstones = db.connection.collection<{ _id: string; deletedAt: Date; purgeAgainAt?: Date }>(
      'deleted_accounts',
    );
    const userId = newUserId();
    const purged: string[] = [];
    const accounts = await createDeletedAccounts(
      db.connection,
      async (id) => {
        purged.push(id);
      },
      { trustNotDeletedMs: 0 },
    );

    await accounts.deleteAccount(userId);
    const { deletedAt, purgeAgainAt } = (await tombstones.findOne({ _id: userId })) ?? {};
    expect(purgeAgainAt?.getTime()).toBeGreaterThanOrEqual((deletedAt as Date).getTime() + LOOK_AGAIN_AFTER_MS);
    // Not due yet: nothing runs.
    await accounts.purgeAgain();
    expect(purged).toEqual([userId]);

    // Due (as it is once its time has come): purged again, once.
    await tombstones.updateOne({ _id: userId }, { $set: { purgeAgainAt: new Date(Date.now() - 1) } });
    await accounts.purgeAgain();
    await accounts.purgeAgain();
    expect(purged).toEqual([userId, userId]);
    expect((await tombstones.findOne({ _id: userId }))?.purgeAgainAt).toBeUndefined();
  });

  it('when started, then the due second purges run on their own, every PURGE_AGAIN_EVERY_MS, and a failed pass is logged and tried again', async () => {
    const tombstones = db.connection.collection<{ _id: string; deletedAt: Date; purgeAgainAt?: Date }>(
      'deleted_accounts_started',
    );
    const userId = newUserId();
    let failFirst = true;
    const purged: string[] = [];
    const accounts = await createDeletedAccounts(
      db.connection,
      async (id) => {
        if (failFirst) {
          failFirst = false;
          throw new Error('the database went away');
        }
        purged.push(id);
      },
      { collectionName: 'deleted_accounts_started' },
    );
    await tombstones.insertOne({ _id: userId, deletedAt: new Date(), purgeAgainAt: new Date(Date.now() - 1) });
    const warnings: string[] = [];

    const stop = accounts.startPurgingAgain({
      warn: (_fields: unknown, message?: string) => warnings.push(String(message)),
    });
    try {
      await eventually(
        'the second purge, done',
        async () => purged.length > 0 && (await tombstones.findOne({ _id: userId }))?.purgeAgainAt === undefined,
        Boolean,
        { timeoutMs: 3 * PURGE_AGAIN_EVERY_MS },
      );
    } finally {
      await stop();
    }
    expect(purged).toEqual([userId]);
    expect(warnings).toEqual(['second purge of deleted accounts failed; will retry']);
  }, 30_000);

  it('when a write looked before a deletion elsewhere, then it is left to the second purge if it was quick, looks again if slow, and a deletion known here counts at once', async () => {
    const tombstones = db.connection.collection<{ _id: string; deletedAt: Date }>('deleted_accounts');
    const elsewhere = newUserId();
    const here = newUserId();
    const accounts = await createDeletedAccounts(db.connection, async () => undefined);
    const lookedAt = Date.now();
    expect(await accounts.isDeletedLately(elsewhere)).toBe(false);

    await tombstones.insertOne({ _id: elsewhere, deletedAt: new Date() }); // another replica's deletion
    await accounts.deleteAccount(here);

    expect(await accounts.deletedSince(elsewhere, lookedAt)).toBe(false);
    expect(await accounts.deletedSince(elsewhere, lookedAt - LOOK_AGAIN_AFTER_MS)).toBe(true);
    expect(await accounts.deletedSince(here, lookedAt)).toBe(true);
  });
});
