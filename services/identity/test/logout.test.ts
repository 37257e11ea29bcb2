/**
 * Logout's Bearer token: one that is not ours is 401 (as at the gateway), and the revocation log
 * holds at most one entry per token however often, and on however many replicas, it logs out. A
 * token revoked already, or expired, answers 204 and adds nothing.
 */
import { signToken, tokenDigest } from '@cs/auth';
import { eventually, TEST_JWT_SECRET } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { revocationModel } from '../src/revocations/model';
import { type IdentityHarness, registered, startIdentity } from './helpers';

let h: IdentityHarness;
let replica: IdentityHarness['http'];

beforeAll(async () => {
  h = await startIdentity(__filename);
  replica = await h.replica();
});
afterAll(async () => {
  await h.db.drop();
});

const entriesOf = (token: string) => revocationModel(h.db.connection).countDocuments({ digest: tokenDigest(token) });
const logout = (authorization: string, refreshToken?: string, http = h.http) =>
  http
    .post('/api/auth/logout')
    .set({ Authorization: authorization })
    .send(refreshToken === undefined ? {} : { refreshToken });

async function session(tag: string) {
  const { email, token, userId } = await registered(h, tag);
  const login = await h.http.post('/api/auth/login').send({ email, password: 'correct horse battery' }).expect(200);
  return { email, userId, registerToken: token, ...(login.body as { token: string; refreshToken: string }) };
}

describe('logout with a Bearer token', () => {
  it('when the Bearer token is not ours (another key, not a token, not Bearer), then 401, and the session it names goes on', async () => {
    const s = await session('logout-foreign');
    const otherKey = signToken(s.userId, { secret: `${TEST_JWT_SECRET}-not-ours`, expiresIn: '1h' });

    for (const authorization of [`Bearer ${otherKey}`, 'Bearer not-a-token', `Basic ${s.token}`]) {
      const res = await logout(authorization, s.refreshToken).expect(401);
      expect(res.body).toEqual({ error: expect.any(String) });
    }
    expect(await entriesOf(otherKey)).toBe(0);
    await h.http.post('/api/auth/refresh').send({ refreshToken: s.refreshToken }).expect(200);
  });

  it('when one token logs out 100 times, ten at once on two replicas, then every answer is 204 and the log holds one entry for it', async () => {
    const s = await session('logout-flood');

    for (let batch = 0; batch < 10; batch++) {
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, i) => logout(`Bearer ${s.token}`, s.refreshToken, i % 2 ? replica : h.http)),
      );
      expect(answers.map((a) => a.status)).toEqual(Array(10).fill(204));
    }

    expect(await entriesOf(s.token)).toBe(1);
    // Either replica may have written the entry. Each process, the writer included, refuses the
    // token once its follow of the log has read it: within the revocation bound (docs/security.md:
    // about a second, at most 5 s, eventually's limit), not at once.
    await eventually(
      'the token refused',
      async () => (await h.http.get('/api/auth/me').set({ Authorization: `Bearer ${s.token}` })).status,
      (status) => status === 401,
    );
  });

  it('when the token was revoked already (log out everywhere), then logout answers 204 and adds no entry', async () => {
    const s = await session('logout-revoked');
    await h.http
      .delete('/api/auth/sessions')
      .set({ Authorization: `Bearer ${s.token}` })
      .expect(204);
    await eventually(
      'the token refused',
      async () => (await h.http.get('/api/auth/me').set({ Authorization: `Bearer ${s.token}` })).status,
      (status) => status === 401,
    );

    await logout(`Bearer ${s.token}`, s.refreshToken).expect(204);

    expect(await entriesOf(s.token)).toBe(0);
  });

  it('when the token has expired, then logout answers 204, ends the session and adds no entry for the token', async () => {
    const s = await session('logout-expired');
    const hourAgo = Math.floor(Date.now() / 1000) - 3600;
    const expired = signToken(s.userId, { secret: TEST_JWT_SECRET, expiresIn: '30m' }, hourAgo);

    await logout(`Bearer ${expired}`, s.refreshToken).expect(204);

    expect(await entriesOf(expired)).toBe(0);
    await h.http.post('/api/auth/refresh').send({ refreshToken: s.refreshToken }).expect(401);
  });
});
