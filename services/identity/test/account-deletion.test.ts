/**
 * Identity's half of deleting an account: the answer, the account gone, and the event kept in
 * the outbox until every owner confirms. Here no owner is reachable (they are tried and retried);
 * delivery to the real posts, notes and files is proven in gateway/test/accounts.test.ts.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { eventually, refusal } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import jwt from 'jsonwebtoken';
import { FREE_FAILURES } from '../src/login-defence/login-throttle';
import { type IdentityHarness, registered, startIdentity, TEST_PASSWORD } from './helpers';

const PASSWORD = TEST_PASSWORD;
let h: IdentityHarness;

beforeAll(async () => {
  h = await startIdentity(__filename);
});
afterAll(async () => {
  await h.db.drop();
});

const account = () => registered(h, 'delete');

/** The outbox's poll, as the service runs it (service.ts), for as long as `until` takes. */
async function polling<T>(until: () => Promise<T>): Promise<T> {
  const stop = h.deletions.start(20);
  try {
    return await until();
  } finally {
    await stop();
  }
}

const remove = (token: string, body: object) =>
  h.http.delete('/api/auth/account').set('Authorization', `Bearer ${token}`).send(body);

interface Entry {
  _id: string;
  pending: string[];
  attempts: number;
  dueAt: Date;
  lastError?: string;
}
const entryOf = (userId: string) => h.db.connection.collection<Entry>('account_deletions').findOne({ _id: userId });

describe('DELETE /api/auth/account', () => {
  it('when the password is right, then 204, the account is gone, and its deletion waits in the outbox for every owner', async () => {
    const { email, token, userId } = await account();

    const res = await remove(token, { password: PASSWORD });

    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect(await h.users.exists({ _id: userId })).toBeNull();
    const login = await h.http.post('/api/auth/login').send({ email, password: PASSWORD });
    expect(login.status).toBe(401);
    expect(login.body).toEqual({ error: 'Invalid credentials' });
    const entry = await entryOf(userId);
    expect(entry?.pending.sort()).toEqual(['files', 'notes', 'posts']);
  });

  it('when the account is deleted, then nothing of its sessions stays: not the sessions, their tokens, nor their end records', async () => {
    const { token, userId } = await account();
    const sessionIds = (await h.db.connection.collection('sessions').find({ userId }).toArray()).map((s) => s._id);

    await remove(token, { password: PASSWORD }).expect(204);

    // What identity keeps of a user goes as its deletion is delivered, right after the answer.
    const left = await eventually(
      'the deleted account’s sessions, tokens and end records gone',
      async () =>
        (await h.db.connection.collection('sessions').countDocuments({ userId })) +
        (await h.db.connection.collection('session_tokens').countDocuments({ userId })) +
        (await h.db.connection.collection('session_ends').countDocuments({ _id: { $in: sessionIds } })),
      (count) => count === 0,
    );
    expect(sessionIds.length).toBeGreaterThan(0);
    expect(left).toBe(0);
  });

  it('when the owners cannot be reached, then the entry stays, with the error and a later due time, until they confirm', async () => {
    const { token, userId } = await account();
    await remove(token, { password: PASSWORD }).expect(204);
    // The immediate attempt runs after the answer.
    const deadline = Date.now() + 5_000;
    while (!(await entryOf(userId))?.lastError && Date.now() < deadline) await sleep(50);

    const first = await entryOf(userId);
    expect(first?.attempts).toBe(1);
    expect(first?.lastError).toMatch(/fetch failed/);
    expect(first?.dueAt.getTime()).toBeGreaterThan(Date.now());

    // Once due again, a pass of the outbox tries again, and backs off further.
    await h.db.connection
      .collection<Entry>('account_deletions')
      .updateOne({ _id: userId }, { $set: { dueAt: new Date(0) } });
    await polling(() =>
      eventually(
        'the second try taken',
        () => entryOf(userId),
        (entry) => entry?.attempts === 2,
        { everyMs: 20 },
      ),
    );
    // Read once the poll has stopped, which waits for the try it took to end.
    const second = await entryOf(userId);
    expect(second?.pending.sort()).toEqual(['files', 'notes', 'posts']);
    expect(second?.attempts).toBe(2);
    expect(second?.dueAt.getTime()).toBeGreaterThan(Date.now() + 1_000);
  });

  it('when the address registers again, then it is a new account with a new id', async () => {
    const { email, token, userId } = await account();
    await remove(token, { password: PASSWORD }).expect(204);

    const again = await h.http.post('/api/auth/register').send({ email, password: PASSWORD });

    expect(again.status).toBe(201);
    expect((jwt.decode(again.body.token) as { id: string }).id).not.toBe(userId);
  });

  it('when the password is wrong, then 401 invalid credentials, and the account stays', async () => {
    const { token, userId } = await account();

    const res = await remove(token, { password: 'not the password' });

    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'Invalid credentials' });
    expect(await h.users.exists({ _id: userId })).not.toBeNull();
    expect(await entryOf(userId)).toBeNull();
  });

  it('when a token keeps guessing the password, then the failed-login throttle answers 429', async () => {
    const { token } = await account();
    for (let i = 0; i < FREE_FAILURES; i++) await remove(token, { password: `guess ${i} guess` }).expect(401);

    const res = await remove(token, { password: PASSWORD });

    expect(res.status).toBe(429);
    expect(res.headers['retry-after']).toBeDefined();
  });

  it('when the account is already deleted, then its still-valid token gets 401 invalid-or-expired token', async () => {
    const { token } = await account();
    await remove(token, { password: PASSWORD }).expect(204);

    const res = await remove(token, { password: PASSWORD });

    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'Invalid or expired token' });
  });

  it.each([
    ['no password', {}, 'Password is required'],
    ['a number', { password: 12345678 }, 'Password must be a string'],
  ])('when the body has %s, then 400 and the account stays', async (_case, body, error) => {
    const { token, userId } = await account();

    const res = await remove(token, body);

    expect(res.status).toBe(400);
    expect(res.body).toEqual(refusal(error));
    expect(await h.users.exists({ _id: userId })).not.toBeNull();
  });

  it('when there is no token, then the contract’s 401', async () => {
    const res = await h.http.delete('/api/auth/account').send({ password: PASSWORD });

    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'No token provided' });
  });

  it('when a deletion was recorded but the request stopped before the account went, then delivery finishes it', async () => {
    const { email, userId } = await account();
    // The state a crash between the two writes leaves behind.
    await h.db.connection
      .collection('account_deletions')
      .insertOne({ _id: userId as never, pending: ['posts'], attempts: 0, dueAt: new Date(0), createdAt: new Date() });

    await polling(() =>
      eventually(
        'the account deleted',
        () => h.users.exists({ _id: userId }),
        (found) => !found,
      ),
    );

    expect(await h.users.exists({ _id: userId })).toBeNull();
    await h.http.post('/api/auth/login').send({ email, password: PASSWORD }).expect(401);
  });
});
