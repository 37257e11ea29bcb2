/**
 * refuseDeletedAccounts and deletedAccountRoutes in a small real app, against the run's real
 * MongoDB-protocol server: the handler writes to a real collection, the tombstones are
 * `@cs/mongo`'s, and the purge deletes from that collection.
 */
import { createDeletedAccounts, type DeletedAccounts } from '@cs/mongo';
import {
  type Caller,
  captureLogger,
  newCaller,
  openTestDatabase,
  TEST_JWT_SECRET,
  type TestDatabase,
  tellDeleted,
  verifierWithoutRevocations,
} from '@cs/testkit';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import Router from '@koa/router';
import type { Collection } from 'mongoose';
import request from 'supertest';
import { type AppState, createServiceApp, deletedAccountRoutes, refuseDeletedAccounts, requireAuth } from '../src';

let db: TestDatabase;
let things: Collection<{ ownerId: string }>;
let accounts: DeletedAccounts;
let http: ReturnType<typeof request>;
/** How many times a handler ran. */
let handled = 0;
/** What the write handler does after the first look and before its write; set by a test. */
let beforeWrite: (userId: string) => Promise<void>;

beforeAll(async () => {
  db = await openTestDatabase(__filename);
  const collection = db.connection.collection<{ ownerId: string }>('things');
  things = collection;
  accounts = await createDeletedAccounts(db.connection, async (userId) => {
    await collection.deleteMany({ ownerId: userId });
  });
  const router = new Router<AppState>();
  router.post('/things', requireAuth(verifierWithoutRevocations()), refuseDeletedAccounts(accounts), async (ctx) => {
    handled += 1;
    const ownerId = ctx.state.userId as string;
    await beforeWrite(ownerId);
    await collection.insertOne({ ownerId });
    ctx.status = 201;
    ctx.body = { ownerId };
  });
  router.post('/unauthenticated', refuseDeletedAccounts(accounts), (ctx) => {
    handled += 1;
    ctx.status = 204;
  });
  const app = createServiceApp({
    name: 'koa-test',
    logger: captureLogger('koa-test').logger,
    routers: [router, deletedAccountRoutes(accounts, { secret: TEST_JWT_SECRET })],
    readiness: {},
    tokens: verifierWithoutRevocations(),
  });
  http = request(app.callback());
});
afterAll(async () => {
  await db.drop();
});
beforeEach(() => {
  beforeWrite = async () => undefined;
});

const deleteAccount = (caller: Caller) => tellDeleted(http, caller);
const thingsOf = (caller: Caller) => things.countDocuments({ ownerId: caller.id });

describe('refuseDeletedAccounts', () => {
  it('when the caller has no tombstone, then the write goes through', async () => {
    const caller = newCaller();
    const res = await http.post('/things').set(caller.auth);

    expect(res.status).toBe(201);
    expect(await thingsOf(caller)).toBe(1);
  });

  it("when the caller's account was deleted, then a write with its still-valid token is 401 invalid-or-expired-token before the handler runs", async () => {
    const caller = newCaller();
    await deleteAccount(caller).expect(204);
    const runs = handled;

    const res = await http.post('/things').set(caller.auth);
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'Invalid or expired token' });
    expect(handled).toBe(runs);
    expect(await thingsOf(caller)).toBe(0);
  });

  it("when the account is deleted while the handler runs (tombstone and the deleter's purge after the first look, the write after both), then the second look purges the write and answers 401, and another user's things stay", async () => {
    const caller = newCaller();
    const other = newCaller();
    await http.post('/things').set(other.auth).expect(201);
    beforeWrite = async (userId) => {
      await accounts.deleteAccount(userId);
      // The deleter's purge is over and found nothing: only the second look can remove what comes.
      expect(await thingsOf(caller)).toBe(0);
    };

    const res = await http.post('/things').set(caller.auth);
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'Invalid or expired token' });
    expect(await thingsOf(caller)).toBe(0);
    expect(await thingsOf(other)).toBe(1);
  });

  it('when another replica deletes the account while a quick write runs (past its look, before its write), then the write is answered, and the second purge removes it once due', async () => {
    const caller = newCaller();
    const tombstones = db.connection.collection<{ _id: string; deletedAt: Date; purgeAgainAt?: Date }>(
      'deleted_accounts',
    );
    beforeWrite = async (userId) => {
      // Another replica's deletion: its tombstone and its purge, unknown to this process's memory.
      await tombstones.insertOne({ _id: userId, deletedAt: new Date(), purgeAgainAt: new Date(Date.now() + 60_000) });
    };

    await http.post('/things').set(caller.auth).expect(201);
    expect(await thingsOf(caller)).toBe(1);
    await accounts.purgeAgain();
    expect(await thingsOf(caller)).toBe(1); // not due yet

    await tombstones.updateOne({ _id: caller.id }, { $set: { purgeAgainAt: new Date(Date.now() - 1) } });
    await accounts.purgeAgain();
    expect(await thingsOf(caller)).toBe(0);
  });

  it('when it is mounted without requireAuth in front, then 500 and the handler never runs', async () => {
    const runs = handled;
    const res = await http.post('/unauthenticated').set(newCaller().auth);

    expect(res.status).toBe(500);
    expect(handled).toBe(runs);
  });
});

describe('deletedAccountRoutes: POST /internal/users/deleted', () => {
  it("when called with a user's token, then 204, the tombstone is written and the user's data purged; again 204; without a token 401", async () => {
    const caller = newCaller();
    const other = newCaller();
    await http.post('/things').set(caller.auth).expect(201);
    await http.post('/things').set(other.auth).expect(201);

    const res = await deleteAccount(caller);
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect(await accounts.isDeleted(caller.id)).toBe(true);
    expect(await thingsOf(caller)).toBe(0);
    expect(await thingsOf(other)).toBe(1);

    await deleteAccount(caller).expect(204);
    expect((await http.post('/internal/users/deleted')).status).toBe(401);
    expect(await accounts.isDeleted(other.id)).toBe(false);
  });
});
