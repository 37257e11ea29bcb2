/**
 * What an account says of its address (`emailVerified`, in the register, login and /me answers),
 * and how an account without a password (one a provider's sign-in made) proves it is its owner's
 * where a route asks for the current password: by a sign-in of the last 5 minutes, never by a
 * refreshed token, and never by password login.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sessionModel } from '../src/sessions/model';
import { type IdentityHarness, registered, startIdentity, TEST_PASSWORD, uniqueEmail } from './helpers';

let h: IdentityHarness;

beforeAll(async () => {
  h = await startIdentity(__filename);
});
afterAll(async () => {
  await h.db.drop();
});

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

/** An account whose password is gone, as a provider's sign-in leaves one: its token and refresh token. */
async function withoutPassword(tag: string) {
  const email = uniqueEmail(tag);
  const res = await h.http.post('/api/auth/register').send({ email, password: TEST_PASSWORD }).expect(201);
  await h.users.updateOne({ email }, { $set: { password: null } });
  return { email, token: res.body.token as string, refreshToken: res.body.refreshToken as string };
}

describe('emailVerified in the answers', () => {
  it('when an account registers and logs in, then both answers and /me say its address is not verified', async () => {
    const email = uniqueEmail('ev');
    const reg = await h.http.post('/api/auth/register').send({ email, password: TEST_PASSWORD }).expect(201);
    expect(reg.body).toMatchObject({ token: expect.any(String), emailVerified: false });
    const login = await h.http.post('/api/auth/login').send({ email, password: TEST_PASSWORD }).expect(200);
    expect(login.body).toMatchObject({ token: expect.any(String), emailVerified: false });
    const me = await h.http.get('/api/auth/me').set(bearer(login.body.token)).expect(200);
    expect(me.body.emailVerified).toBe(false);
  });

  it('when the account is verified, then login and /me say so, in cookie mode too', async () => {
    const { email, token } = await registered(h, 'ev-yes');
    await h.users.updateOne({ email }, { $set: { emailVerified: true } });
    const login = await h.http
      .post('/api/auth/login')
      .set('X-Refresh-Token', 'cookie')
      .send({ email, password: TEST_PASSWORD })
      .expect(200);
    expect(login.body).toEqual({ token: expect.any(String), expiresIn: expect.any(Number), emailVerified: true });
    expect((await h.http.get('/api/auth/me').set(bearer(token)).expect(200)).body.emailVerified).toBe(true);
  });
});

describe('an account without a password', () => {
  it('when someone logs in to it with any password, then the answer is the wrong password 401', async () => {
    const { email } = await withoutPassword('nopw-login');
    const res = await h.http.post('/api/auth/login').send({ email, password: TEST_PASSWORD }).expect(401);
    expect(res.body).toEqual({ error: 'Invalid credentials' });
  });

  it('when its owner deletes it within 5 minutes of signing in, then whatever password field is sent, it is deleted', async () => {
    const { email, token } = await withoutPassword('nopw-fresh');
    await h.http.delete('/api/auth/account').set(bearer(token)).send({ password: 'anything at all' }).expect(204);
    expect(await h.users.exists({ email })).toBeNull();
  });

  it('when the sign-in is older than 5 minutes, then deletion and a password change answer 401 asking for a fresh sign-in, even with a token refreshed just now', async () => {
    const { email, refreshToken } = await withoutPassword('nopw-stale');
    const user = await h.users.findOne({ email }).lean();
    const sixMinutesAgo = new Date(Date.now() - 6 * 60_000);
    await sessionModel(h.db.connection).updateMany(
      { userId: user?._id.toHexString() },
      { $set: { createdAt: sixMinutesAgo } },
    );
    const refreshed = await h.http.post('/api/auth/refresh').send({ refreshToken }).expect(200);
    const fresh = {
      error: 'This account has no password: sign in again with its provider, then retry within 5 minutes of signing in',
    };
    const deletion = await h.http
      .delete('/api/auth/account')
      .set(bearer(refreshed.body.token))
      .send({ password: 'anything' })
      .expect(401);
    expect(deletion.body).toEqual(fresh);
    const change = await h.http
      .put('/api/auth/password')
      .set(bearer(refreshed.body.token))
      .send({ currentPassword: 'anything', newPassword: 'a brand new password' })
      .expect(401);
    expect(change.body).toEqual(fresh);
    expect(await h.users.exists({ email })).not.toBeNull();
  });
});
