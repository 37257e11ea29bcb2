/**
 * Cookie mode (`X-Refresh-Token: cookie`): the refresh token lives in an HttpOnly cookie that page
 * script cannot read, and never in a body. And the refresh limit per session.
 */
import { refusal } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import bcrypt from 'bcrypt';
import { type IdentityHarness, registered, startIdentity, TEST_PASSWORD, uniqueEmail } from './helpers';

let h: IdentityHarness;
let secure: IdentityHarness;
const COOKIE_MODE = { 'X-Refresh-Token': 'cookie' };

beforeAll(async () => {
  [h, secure] = await Promise.all([
    startIdentity(__filename),
    startIdentity(`${__filename}-https`, { WEB_URL: 'https://app.example.com' }),
  ]);
});
afterAll(async () => {
  await Promise.all([h?.db.drop(), secure?.db.drop()]);
});

/** The `cs_refresh` cookie a response set: its value and its attributes. */
function refreshCookie(res: { headers: Record<string, unknown> }): { value: string; attributes: string[] } {
  const set = ([] as string[]).concat((res.headers['set-cookie'] as string[] | undefined) ?? []);
  const cookie = set.find((c) => c.startsWith('cs_refresh='));
  if (!cookie) throw new Error(`no cs_refresh cookie in ${JSON.stringify(set)}`);
  const [pair = '', ...attributes] = cookie.split(';').map((p) => p.trim());
  return { value: pair.slice('cs_refresh='.length), attributes };
}

async function cookieLogin(harness = h) {
  const email = uniqueEmail('cookie');
  await harness.http.post('/api/auth/register').send({ email, password: TEST_PASSWORD }).expect(201);
  const res = await harness.http
    .post('/api/auth/login')
    .set(COOKIE_MODE)
    .send({ email, password: TEST_PASSWORD })
    .expect(200);
  return { res, cookie: refreshCookie(res) };
}

const refreshWith = (cookie: string, harness = h) =>
  harness.http.post('/api/auth/refresh').set(COOKIE_MODE).set('Cookie', `cs_refresh=${cookie}`);

describe('cookie mode', () => {
  it('when a client logs in in cookie mode, then the body has no refresh token and the cookie is HttpOnly, SameSite=Strict, on the auth path', async () => {
    const { res, cookie } = await cookieLogin();

    expect(res.body).toEqual({ token: expect.any(String), expiresIn: 3600, emailVerified: false });
    expect(cookie.value).toMatch(/^[\w-]{104}$/);
    expect(cookie.attributes).toEqual(['Path=/api/auth', 'Max-Age=1209600', 'HttpOnly', 'SameSite=Strict']);
  });

  it('when the web client is served over HTTPS, then the cookie is Secure too', async () => {
    const { cookie } = await cookieLogin(secure);

    expect(cookie.attributes).toContain('Secure');
  });

  it('when the cookie refreshes with no body, then a new access token and a new cookie come back, and the old cookie within the grace interval gets the same', async () => {
    const { cookie } = await cookieLogin();

    const first = await refreshWith(cookie.value).expect(200);
    const again = await refreshWith(cookie.value).expect(200);

    expect(first.body).toEqual({ token: expect.any(String), expiresIn: 3600 });
    expect(refreshCookie(first).value).not.toBe(cookie.value);
    expect(again.body).toEqual(first.body);
    expect(refreshCookie(again).value).toBe(refreshCookie(first).value);
    await h.http.get('/api/auth/me').set('Authorization', `Bearer ${first.body.token}`).expect(200);
  });

  it('when cookie mode comes without its cookie, then refresh is 401', async () => {
    const res = await h.http.post('/api/auth/refresh').set(COOKIE_MODE).expect(401);

    expect(res.body).toEqual({ error: 'Invalid or expired refresh token' });
  });

  it('when the cookie comes without the header, then it is never read: the JSON form asks for its body', async () => {
    const { cookie } = await cookieLogin();

    const res = await h.http.post('/api/auth/refresh').set('Cookie', `cs_refresh=${cookie.value}`).expect(400);

    expect(res.body).toEqual(refusal('refreshToken is required'));
  });

  it('when cookie mode also brings a refresh token in the body, then 400', async () => {
    const { cookie } = await cookieLogin();

    const res = await refreshWith(cookie.value).send({ refreshToken: cookie.value }).expect(400);

    expect(res.body).toEqual({ error: 'In cookie mode the refresh token comes from its cookie, never from the body' });
  });

  it('when the browser marks a cookie-mode request cross-site, then 403 and the session is not touched', async () => {
    const { cookie } = await cookieLogin();

    await refreshWith(cookie.value).set('Sec-Fetch-Site', 'cross-site').expect(403);
    await refreshWith(cookie.value).set('Sec-Fetch-Site', 'same-origin').expect(200);
  });

  it('when a cross-site cookie-mode login or registration brings the right credentials, then 403 before any work: no password checked or hashed, no session, no account', async () => {
    const { email, userId } = await registered(h, 'cross-site');
    const sessions = h.db.connection.collection('sessions');
    const before = await sessions.countDocuments({ userId });
    const compare = jest.spyOn(bcrypt, 'compare');
    const hash = jest.spyOn(bcrypt, 'hash');
    try {
      for (const site of ['cross-site', 'Cross-Site', ' CROSS-SITE ']) {
        const login = await h.http
          .post('/api/auth/login')
          .set(COOKIE_MODE)
          .set('Sec-Fetch-Site', site)
          .send({ email, password: TEST_PASSWORD });
        expect([login.status, login.body]).toEqual([403, { error: 'Cookie mode is only for requests from this site' }]);
        expect(login.headers['set-cookie']).toBeUndefined();
      }
      const newcomer = uniqueEmail('cross-site');
      await h.http
        .post('/api/auth/register')
        .set(COOKIE_MODE)
        .set('Sec-Fetch-Site', 'Cross-Site')
        .send({ email: newcomer, password: TEST_PASSWORD })
        .expect(403);

      expect(compare).not.toHaveBeenCalled();
      expect(hash).not.toHaveBeenCalled();
      expect(await sessions.countDocuments({ userId })).toBe(before);
      expect(await h.users.exists({ email: newcomer })).toBeNull();
    } finally {
      compare.mockRestore();
      hash.mockRestore();
    }
    // The same login from this site works.
    await h.http
      .post('/api/auth/login')
      .set(COOKIE_MODE)
      .set('Sec-Fetch-Site', 'same-origin')
      .send({ email, password: TEST_PASSWORD })
      .expect(200);
    expect(await sessions.countDocuments({ userId })).toBe(before + 1);
  });

  it('when a cross-site cookie-mode refresh or logout is marked in mixed case, then 403 and the session is not touched', async () => {
    const { cookie } = await cookieLogin();

    await refreshWith(cookie.value).set('Sec-Fetch-Site', 'Cross-Site').expect(403);
    await h.http
      .post('/api/auth/logout')
      .set(COOKIE_MODE)
      .set('Sec-Fetch-Site', 'CROSS-SITE')
      .set('Cookie', `cs_refresh=${cookie.value}`)
      .expect(403);
    await refreshWith(cookie.value).expect(200);
  });

  it('when a cookie-mode session logs out, then the cookie is cleared and its token refreshes no more', async () => {
    const { cookie } = await cookieLogin();

    const out = await h.http
      .post('/api/auth/logout')
      .set(COOKIE_MODE)
      .set('Cookie', `cs_refresh=${cookie.value}`)
      .expect(204);

    expect(refreshCookie(out)).toEqual({
      value: '',
      attributes: ['Path=/api/auth', 'Max-Age=0', 'HttpOnly', 'SameSite=Strict'],
    });
    await refreshWith(cookie.value).expect(401);
  });
});

describe('the refresh limit per session', () => {
  it('when one session refreshes more than 30 times in a minute, then the rest get 429 with Retry-After', async () => {
    const email = uniqueEmail('busy');
    const pair = (await h.http.post('/api/auth/register').send({ email, password: TEST_PASSWORD }).expect(201)).body;
    const other = (await h.http.post('/api/auth/login').send({ email, password: TEST_PASSWORD }).expect(200)).body;

    // The same token again and again: within the grace interval each answers the same pair.
    const answers = await Promise.all(
      Array.from({ length: 32 }, () => h.http.post('/api/auth/refresh').send({ refreshToken: pair.refreshToken })),
    );

    expect(answers.filter((r) => r.status === 200)).toHaveLength(30);
    const refused = answers.filter((r) => r.status === 429);
    expect(refused).toHaveLength(2);
    for (const r of refused) expect(Number(r.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    // Another session of the same account has its own count.
    await h.http.post('/api/auth/refresh').send({ refreshToken: other.refreshToken }).expect(200);
  });
});
