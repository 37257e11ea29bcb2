import { eventually } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type IdentityHarness, registered, TEST_PASSWORD, uniqueEmail } from './helpers';
import { signIn, signInUpToLanding, startIdentityWithProvider, uniqueName, userIdOf } from './oidc-helpers';

let h: IdentityHarness;

beforeAll(async () => {
  h = await startIdentityWithProvider(__filename);
});
afterAll(async () => {
  await h.db.drop();
});

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
const identitiesOf = async (token: string) =>
  (await h.http.get('/api/auth/identities').set(bearer(token)).expect(200)).body as { _id: string; provider: string }[];
const passwordLogin = (email: string) => h.http.post('/api/auth/login').send({ email, password: TEST_PASSWORD });
const markVerified = (email: string) => h.users.updateOne({ email }, { $set: { emailVerified: true } });

describe('linking a provider’s identity to an account', () => {
  it('when the provider vouches for the address of a verified account, then it is linked, and the password still works', async () => {
    const { email, userId } = await registered(h, 'oidc-link');
    await markVerified(email);

    const session = await signIn(h, { name: uniqueName(), email, verified: true });

    expect(userIdOf(session.token)).toBe(userId);
    expect(session.emailVerified).toBe(true);
    expect(await identitiesOf(session.token)).toEqual([
      { _id: expect.stringMatching(/^[0-9a-f]{24}$/), provider: 'test', email, createdAt: expect.any(String) },
    ]);
    await passwordLogin(email).expect(200);
  });

  it.each([
    ['an unverified account', false],
    ['a verified account', true],
  ])(
    'when the provider does not vouch for the address of %s, then #error=email_in_use and nothing is linked',
    async (_what, verified) => {
      const { email, token } = await registered(h, 'oidc-in-use');
      if (verified) await markVerified(email);

      expect(await signInUpToLanding(h, { name: uniqueName(), email, verified: false })).toEqual({
        error: 'email_in_use',
      });
      expect(await identitiesOf(token)).toEqual([]);
      await passwordLogin(email).expect(200);
    },
  );

  it('when the provider vouches for the address of an unverified account, then it takes the account over: password cleared, sessions ended, marked verified', async () => {
    // Someone registered the address before its owner arrived (pre-hijacking).
    const email = uniqueEmail('oidc-prehijack');
    const early = await h.http.post('/api/auth/register').send({ email, password: TEST_PASSWORD }).expect(201);

    const owner = await signIn(h, { name: uniqueName(), email, verified: true });

    expect(userIdOf(owner.token)).toBe(userIdOf(early.body.token));
    expect(owner.emailVerified).toBe(true);
    const login = await passwordLogin(email).expect(401);
    expect(login.body).toEqual({ error: 'Invalid credentials' });
    const refresh = await h.http.post('/api/auth/refresh').send({ refreshToken: early.body.refreshToken }).expect(401);
    expect(refresh.body).toEqual({ error: 'Invalid or expired refresh token' });
    await eventually(
      'the early access token refused',
      async () => (await h.http.get('/api/auth/me').set(bearer(early.body.token))).status,
      (status) => status === 401,
    );
    const me = await h.http.get('/api/auth/me').set(bearer(owner.token)).expect(200);
    expect(me.body).toMatchObject({ email, emailVerified: true });
  });

  it('when a provider takes over an unverified account, then the account’s other identities are unlinked', async () => {
    const email = uniqueEmail('oidc-takeover');
    const first = { name: uniqueName('unvouched'), email, verified: false };
    const made = await signIn(h, first);
    expect(made.emailVerified).toBe(false);

    const owner = await signIn(h, { name: uniqueName('vouched'), email, verified: true });

    expect(userIdOf(owner.token)).toBe(userIdOf(made.token));
    expect(await identitiesOf(owner.token)).toHaveLength(1);
    // The identity unlinked is now a stranger whose address is in use.
    expect(await signInUpToLanding(h, first)).toEqual({ error: 'email_in_use' });
  });
});

describe('DELETE /api/auth/identities/{id}', () => {
  it('when the account has a password, then 204, and the identity is no longer listed', async () => {
    const { email } = await registered(h, 'oidc-unlink');
    await markVerified(email);
    const session = await signIn(h, { name: uniqueName(), email, verified: true });
    const [identity] = await identitiesOf(session.token);

    const res = await h.http.delete(`/api/auth/identities/${identity?._id}`).set(bearer(session.token)).expect(204);

    expect(res.text).toBe('');
    expect(await identitiesOf(session.token)).toEqual([]);
  });

  it('when it is the last way to log in, then 409; with another identity linked, 204 and then 409', async () => {
    const email = uniqueEmail('oidc-last');
    const session = await signIn(h, { name: uniqueName('one'), email, verified: true });
    const [only] = await identitiesOf(session.token);

    const refused = await h.http.delete(`/api/auth/identities/${only?._id}`).set(bearer(session.token)).expect(409);

    expect(refused.body).toEqual({
      error:
        'This is the last way to log in to the account: set a password, or link another provider, before unlinking it.',
    });
    await signIn(h, { name: uniqueName('two'), email, verified: true });
    const [first, second] = await identitiesOf(session.token);
    await h.http.delete(`/api/auth/identities/${first?._id}`).set(bearer(session.token)).expect(204);
    await h.http.delete(`/api/auth/identities/${second?._id}`).set(bearer(session.token)).expect(409);
  });

  it('when the identity is another account’s, then 404', async () => {
    const theirs = await signIn(h, { name: uniqueName(), email: uniqueEmail('oidc-theirs'), verified: true });
    const [identity] = await identitiesOf(theirs.token);
    const mine = await registered(h, 'oidc-mine');

    const res = await h.http.delete(`/api/auth/identities/${identity?._id}`).set(bearer(mine.token)).expect(404);

    expect(res.body).toEqual({ error: 'Not found' });
  });

  it('when not logged in, then 401', async () => {
    const res = await h.http.get('/api/auth/identities').expect(401);

    expect(res.body).toEqual({ error: 'No token provided' });
  });
});

describe('deleting an account', () => {
  it('when an account made by a provider is deleted, then its identity is forgotten, and signing in again makes a new account', async () => {
    const login = { name: uniqueName(), email: uniqueEmail('oidc-deleted'), verified: true };
    const session = await signIn(h, login);
    // No password: a sign-in of the last 5 minutes proves the owner; the body's password is ignored.
    await h.http.delete('/api/auth/account').set(bearer(session.token)).send({ password: 'ignored' }).expect(204);

    const again = await signIn(h, login);

    expect(userIdOf(again.token)).not.toBe(userIdOf(session.token));
    expect(await identitiesOf(again.token)).toHaveLength(1);
  });
});

describe('two unlinks at once', () => {
  it('when the account’s last two identities are unlinked at the same moment, then it keeps at least one', async () => {
    const email = uniqueEmail('oidc-race');
    const session = await signIn(h, { name: uniqueName('a'), email, verified: true });
    await signIn(h, { name: uniqueName('b'), email, verified: true });
    const both = await identitiesOf(session.token);
    expect(both).toHaveLength(2);

    const answers = await Promise.all(
      both.map(({ _id }) => h.http.delete(`/api/auth/identities/${_id}`).set(bearer(session.token))),
    );

    expect(answers.map((res) => res.status).sort()).toEqual(expect.arrayContaining([409]));
    expect((await identitiesOf(session.token)).length).toBeGreaterThanOrEqual(1);
  });
});
