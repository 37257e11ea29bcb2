import { newUserId, TEST_JWT_SECRET, tokenFor } from '@cs/testkit';
import { describe, expect, it } from '@jest/globals';
import jwt from 'jsonwebtoken';
import { testApp } from './app';

const { http } = testApp();
const userId = newUserId();
const b64 = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
const now = () => Math.floor(Date.now() / 1000);

describe('requireAuth', () => {
  it('when the token is valid, then the handler runs with the id claim as the caller', async () => {
    const res = await http.get('/protected').set('Authorization', `Bearer ${tokenFor(userId)}`);

    expect(res.status).toBe(200);
    expect(res.body).toEqual({ userId });
  });

  it.each([
    ['no header', undefined],
    ['an empty header', ''],
    ['Basic credentials', 'Basic dXNlcjpwYXNz'],
    ['a lowercase scheme', `bearer ${tokenFor(newUserId())}`],
    ['the scheme with no space', 'Bearer'],
    // HTTP trims the trailing space, so this is the bare scheme again.
    ['the scheme and a space, no token', 'Bearer '],
    ['a token with no scheme', tokenFor(newUserId())],
  ])('when sent with %s, then 401 no-token-provided', async (_case, header) => {
    const req = http.get('/protected');
    const res = await (header === undefined ? req : req.set('Authorization', header));

    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'No token provided' });
  });

  const invalid: [string, () => string][] = [
    ['an empty token before a space', () => 'Bearer  x'],
    ['a malformed token', () => 'Bearer not-a-jwt'],
    ['a wrong signature', () => `Bearer ${tokenFor(userId, '1h', 'another-secret-another-secret-another-secret')}`],
    [
      'an expired token',
      () => `Bearer ${jwt.sign({ id: userId, iat: now() - 7200, exp: now() - 3600 }, TEST_JWT_SECRET)}`,
    ],
    [
      'alg none',
      () => `Bearer ${b64({ alg: 'none', typ: 'JWT' })}.${b64({ id: userId, iat: now(), exp: now() + 3600 })}.`,
    ],
    ['HS512', () => `Bearer ${jwt.sign({ id: userId }, TEST_JWT_SECRET, { algorithm: 'HS512', expiresIn: '1h' })}`],
    ['no id claim', () => `Bearer ${jwt.sign({ sub: userId }, TEST_JWT_SECRET, { expiresIn: '1h' })}`],
    [
      'an id that is not an ObjectId',
      () => `Bearer ${jwt.sign({ id: 'admin' }, TEST_JWT_SECRET, { expiresIn: '1h' })}`,
    ],
    [
      'an operator object as id',
      () => `Bearer ${jwt.sign({ id: { $ne: null } }, TEST_JWT_SECRET, { expiresIn: '1h' })}`,
    ],
    ['no exp', () => `Bearer ${jwt.sign({ id: userId }, TEST_JWT_SECRET)}`],
    [
      'an absurd exp',
      () => `Bearer ${jwt.sign({ id: userId, iat: now(), exp: now() + 100 * 365 * 24 * 3600 }, TEST_JWT_SECRET)}`,
    ],
    ['a string exp', () => `Bearer ${b64({ alg: 'HS256', typ: 'JWT' })}.${b64({ id: userId, exp: 'never' })}.x`],
    ['a 10 kB token', () => `Bearer ${'a'.repeat(10_000)}`],
  ];
  it.each(invalid)('when the token has %s, then 401 invalid-or-expired-token', async (_case, header) => {
    const res = await http.get('/protected').set('Authorization', header());

    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'Invalid or expired token' });
  });

  it('when the token is text after the first space, then any later spaces belong to the token (and fail it)', async () => {
    const res = await http.get('/protected').set('Authorization', `Bearer ${tokenFor(userId)} trailing`);

    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'Invalid or expired token' });
  });
});

describe('optionalAuth', () => {
  it('when no header is sent, then the handler runs anonymously; a valid token names the caller', async () => {
    expect((await http.get('/optional')).body).toEqual({ userId: null });
    expect((await http.get('/optional').set('Authorization', `Bearer ${tokenFor(userId)}`)).body).toEqual({ userId });
  });

  it('when a header is sent but is invalid, then 401', async () => {
    const res = await http.get('/optional').set('Authorization', 'Bearer nope');

    expect(res.status).toBe(401);
  });
});
