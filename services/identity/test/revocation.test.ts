/**
 * Ending sessions reaches access tokens: identity writes the revocation log, and every process
 * (identity's own requireAuth here) refuses the revoked tokens from its list in memory, within a
 * second or so. The whole system's bound, on every gateway and service replica, is proven in
 * tests/faults/revocation.test.ts.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { eventually, waitForMail } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import jwt from 'jsonwebtoken';
import { type IdentityHarness, startIdentity, TEST_PASSWORD, uniqueEmail } from './helpers';

interface Pair {
  token: string;
  refreshToken: string;
}

let h: IdentityHarness;
let replica: IdentityHarness['http'];

beforeAll(async () => {
  h = await startIdentity(__filename);
  replica = await h.replica();
});
afterAll(async () => {
  await h.db.drop();
});

const bearer = (pair: Pair) => ({ Authorization: `Bearer ${pair.token}` });
const me = (pair: Pair, http = h.http) => http.get('/api/auth/me').set(bearer(pair));
const refusedWithin = (what: string, pair: Pair, http = h.http) =>
  eventually(
    what,
    async () => (await me(pair, http)).status,
    (status) => status === 401,
    { timeoutMs: 5_000 },
  );

async function account(): Promise<Pair & { email: string }> {
  const email = uniqueEmail('revoked');
  const res = await h.http.post('/api/auth/register').send({ email, password: TEST_PASSWORD }).expect(201);
  return { ...(res.body as Pair), email };
}
const login = async (email: string, http = h.http): Promise<Pair> =>
  (await http.post('/api/auth/login').send({ email, password: TEST_PASSWORD }).expect(200)).body as Pair;
/** So that two tokens of one user, issued on both sides of it, are different tokens. */
const nextSecond = () => sleep(1000 - (Date.now() % 1000) + 20);

describe('revocation of access tokens', () => {
  it('when a session logs out with its Bearer token, then that token is refused on both replicas, and another session’s is not', async () => {
    const leaving = await account();
    await nextSecond();
    const staying = await login(leaving.email);

    await h.http.post('/api/auth/logout').set(bearer(leaving)).send({ refreshToken: leaving.refreshToken }).expect(204);

    await refusedWithin('the logged-out token refused here', leaving);
    await refusedWithin('the logged-out token refused on the replica', leaving, replica);
    await me(staying).expect(200);
    await me(staying, replica).expect(200);
  });

  it('when one user gets several tokens in the same second, then each is a token of its own: logging one out leaves the others working', async () => {
    const user = await account();
    const more = await Promise.all([login(user.email), login(user.email, replica), login(user.email)]);
    const tokens = [user, ...more];

    expect(new Set(tokens.map((t) => t.token)).size).toBe(4);
    await h.http.post('/api/auth/logout').set(bearer(user)).send({ refreshToken: user.refreshToken }).expect(204);
    await refusedWithin('the logged-out token refused', user);
    for (const other of more) await me(other).expect(200);
  });

  it('when a user with several tokens of one second (some issued a second ahead) logs out everywhere, then every one is refused and the next login works', async () => {
    const user = await account();
    const more = await Promise.all([login(user.email), login(user.email, replica), login(user.email)]);

    await h.http.delete('/api/auth/sessions').set(bearer(user)).expect(204);
    const after = await login(user.email);

    for (const pair of [user, ...more]) await refusedWithin('a token from before refused', pair);
    await me(after).expect(200);
  });

  it('when a session logs out and the user logs in again at once, then the new token works', async () => {
    const user = await account();
    await h.http.post('/api/auth/logout').set(bearer(user)).send({ refreshToken: user.refreshToken }).expect(204);
    const again = await login(user.email);

    expect(again.token).not.toBe(user.token);
    await refusedWithin('the logged-out token refused', user);
    await me(again).expect(200);
  });

  it('when a session is ended from the list, then the access tokens it was issued are refused', async () => {
    const ended = await account();
    await nextSecond();
    const other = await login(ended.email);
    // Newest first: the older one is `ended`'s.
    const sessions = (await h.http.get('/api/auth/sessions').set(bearer(other)).expect(200)).body as { id: string }[];

    await h.http
      .delete(`/api/auth/sessions/${sessions.at(-1)?.id}`)
      .set(bearer(other))
      .expect(204);

    await refusedWithin('the ended session’s token refused', ended);
    await me(other).expect(200);
  });

  it('when a user logs out everywhere, then every older token is refused, and a login right after works at once', async () => {
    const user = await account();
    await nextSecond();
    const second = await login(user.email);

    await replica.delete('/api/auth/sessions').set(bearer(second)).expect(204);
    const after = await login(user.email);

    await me(after).expect(200);
    await refusedWithin('the first token refused', user);
    await refusedWithin('the second token refused', second);
    await me(after).expect(200);
  });

  it('when the password changes, then older tokens are refused and the pair it answers works', async () => {
    const user = await account();
    const changed = await h.http
      .put('/api/auth/password')
      .set(bearer(user))
      .send({ currentPassword: TEST_PASSWORD, newPassword: 'a new password' })
      .expect(200);

    await me(changed.body as Pair).expect(200);
    await refusedWithin('the token from before the change refused', user);
  });

  it('when the password is reset by e-mail, then older tokens are refused and a login with the new password works', async () => {
    const user = await account();
    const since = new Date();
    await h.http.post('/api/auth/password-reset').send({ email: user.email }).expect(202);
    const mail = await waitForMail(user.email, { since, subject: 'Set a new password' });
    const token = decodeURIComponent(/reset-password\?token=([^\s"<&]+)/.exec(mail.text)?.[1] ?? '');

    await h.http.post('/api/auth/password-reset/confirm').send({ token, newPassword: 'a new password' }).expect(204);
    const after = (
      await h.http.post('/api/auth/login').send({ email: user.email, password: 'a new password' }).expect(200)
    ).body as Pair;

    await me(after).expect(200);
    await refusedWithin('the token from before the reset refused', user);
    await refusedWithin('the token from before the reset refused on the replica', user, replica);
  });

  it('when two replicas revoke at once, then the log numbers its entries 1, 2, 3… with no gap and none twice', async () => {
    const users = await Promise.all(Array.from({ length: 8 }, () => account()));
    const before = (await h.http.get('/internal/revocations?after=0').expect(200)).body as { last: number };

    await Promise.all(
      users.map((u, i) => (i % 2 ? replica : h.http).delete('/api/auth/sessions').set(bearer(u)).expect(204)),
    );

    const log = (await h.http.get(`/internal/revocations?after=${before.last}`).expect(200)).body as {
      entries: { seq: number; userId?: string }[];
      last: number;
    };
    const ids = users.map((u) => (jwt.decode(u.token) as { id: string }).id);
    expect(log.entries.map((e) => e.seq)).toEqual(Array.from({ length: 8 }, (_, i) => before.last + 1 + i));
    expect(log.last).toBe(before.last + 8);
    expect(log.entries.map((e) => e.userId).sort()).toEqual(ids.sort());
  });

  it('when the log is asked with an after that is not a whole number, then 400', async () => {
    for (const after of ['-1', 'abc', '1.5', '01']) {
      await h.http.get(`/internal/revocations?after=${after}`).expect(400);
    }
  });
});
