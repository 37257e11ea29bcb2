import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type IdentityHarness, TEST_PASSWORD, uniqueEmail } from './helpers';
import { pkce, signIn, signInUpToLanding, startIdentityWithProvider, uniqueName, userIdOf } from './oidc-helpers';

let h: IdentityHarness;

beforeAll(async () => {
  h = await startIdentityWithProvider(__filename);
});
afterAll(async () => {
  await h.db.drop();
});

describe('sign-in with an OpenID Connect provider', () => {
  it('when the provider is discovered, then it is listed with its id and name', async () => {
    const res = await h.http.get('/api/auth/providers').expect(200);

    expect(res.body).toEqual([{ id: 'test', name: 'Test' }]);
  });

  it('when a new person signs in with an address the provider vouches for, then a verified account without a password is made', async () => {
    const email = uniqueEmail('oidc-new');

    const session = await signIn(h, { name: uniqueName(), email, verified: true });

    expect(session).toEqual({
      token: expect.any(String),
      refreshToken: expect.any(String),
      expiresIn: 3600,
      emailVerified: true,
    });
    const me = await h.http.get('/api/auth/me').set('Authorization', `Bearer ${session.token}`).expect(200);
    expect(me.body).toMatchObject({ email, emailVerified: true });
    // No password: password login answers as a wrong password does.
    const login = await h.http.post('/api/auth/login').send({ email, password: TEST_PASSWORD }).expect(401);
    expect(login.body).toEqual({ error: 'Invalid credentials' });
  });

  it('when the provider does not vouch for the address, then the new account is not verified', async () => {
    const session = await signIn(h, { name: uniqueName(), email: uniqueEmail('oidc-unvouched'), verified: false });

    expect(session.emailVerified).toBe(false);
  });

  it('when a known identity signs in again, then it logs into the same account', async () => {
    const login = { name: uniqueName(), email: uniqueEmail('oidc-again'), verified: true };
    const first = await signIn(h, login);

    const second = await signIn(h, login);

    expect(userIdOf(second.token)).toBe(userIdOf(first.token));
  });

  it('when the provider gives no address, then the browser goes back with #error=email_missing', async () => {
    expect(await signInUpToLanding(h, { name: uniqueName() })).toEqual({ error: 'email_missing' });
  });

  it('when the code is exchanged in cookie mode, then the answer is a login’s, with the refresh token in its cookie', async () => {
    const { verifier, challenge } = pkce();
    const { code } = await signInUpToLanding(h, { name: uniqueName(), email: uniqueEmail('oidc-cookie') }, challenge);

    const res = await h.http
      .post('/api/auth/oidc/exchange')
      .set('X-Refresh-Token', 'cookie')
      .send({ code, verifier })
      .expect(200);

    expect(res.body).toEqual({ token: expect.any(String), expiresIn: 3600, emailVerified: false });
    expect(String(res.headers['set-cookie'])).toMatch(
      /^cs_refresh=[\w-]+; Path=\/api\/auth; .*HttpOnly; SameSite=Strict/,
    );
  });
});
