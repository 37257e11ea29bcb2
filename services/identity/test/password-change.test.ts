import { eventually, refusal, TEST_JWT_SECRET } from '@cs/testkit';
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

const account = () => registered(h, 'change');

const change = (token: string, body: object) =>
  h.http.put('/api/auth/password').set('Authorization', `Bearer ${token}`).send(body);

describe('PUT /api/auth/password', () => {
  it('when the current password is right, then 200 with a fresh token, and only the new password logs in', async () => {
    const { email, token, userId } = await account();

    const res = await change(token, { currentPassword: PASSWORD, newPassword: 'a brand new secret' });

    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['emailVerified', 'expiresIn', 'refreshToken', 'token']);
    expect((jwt.verify(res.body.token, TEST_JWT_SECRET) as jwt.JwtPayload).id).toBe(userId);
    await h.http.post('/api/auth/login').send({ email, password: 'a brand new secret' }).expect(200);
    const old = await h.http.post('/api/auth/login').send({ email, password: PASSWORD });
    expect(old.status).toBe(401);
    expect(old.body).toEqual({ error: 'Invalid credentials' });
  });

  it('when the current password is wrong, then 401 with the invalid-credentials message, and nothing changes', async () => {
    const { email, token } = await account();

    const res = await change(token, { currentPassword: 'not the password', newPassword: 'a brand new secret' });

    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'Invalid credentials' });
    await h.http.post('/api/auth/login').send({ email, password: PASSWORD }).expect(200);
  });

  it('when a token keeps guessing the current password, then the failed-login throttle answers 429 with Retry-After', async () => {
    const { token } = await account();
    for (let i = 0; i < FREE_FAILURES; i++) {
      await change(token, { currentPassword: `guess ${i} guess`, newPassword: 'a brand new secret' }).expect(401);
    }

    const res = await change(token, { currentPassword: PASSWORD, newPassword: 'a brand new secret' });

    expect(res.status).toBe(429);
    expect(res.body).toEqual({ error: 'Too many requests, please try again later' });
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
  });

  it.each([
    ['short', 'short', 'Password must be at least 8 characters'],
    ['over 72 bytes', 'é'.repeat(37), 'Password must be at most 72 bytes'],
  ])('when the new password is %s, then 400 with the register rule’s message', async (_case, newPassword, message) => {
    const { email, token } = await account();

    const res = await change(token, { currentPassword: PASSWORD, newPassword });

    expect(res.status).toBe(400);
    expect(res.body).toEqual(refusal(message));
    await h.http.post('/api/auth/login').send({ email, password: PASSWORD }).expect(200);
  });

  it.each([
    ['no currentPassword', { newPassword: 'a brand new secret' }, 'currentPassword and newPassword are required'],
    [
      'an empty newPassword',
      { currentPassword: PASSWORD, newPassword: '' },
      'currentPassword and newPassword are required',
    ],
    [
      'an object for currentPassword',
      { currentPassword: { $gt: '' }, newPassword: 'a brand new secret' },
      'currentPassword and newPassword must be strings',
    ],
  ])('when the body has %s, then 400', async (_case, body, message) => {
    const { token } = await account();

    const res = await change(token, body);

    expect(res.status).toBe(400);
    expect(res.body).toEqual(refusal(message));
  });

  it('when there is no token, or a bad one, then the contract’s 401s', async () => {
    const none = await h.http.put('/api/auth/password').send({ currentPassword: PASSWORD, newPassword: 'x'.repeat(9) });
    expect(none.status).toBe(401);
    expect(none.body).toEqual({ error: 'No token provided' });

    const bad = await change('not-a-token', { currentPassword: PASSWORD, newPassword: 'x'.repeat(9) });
    expect(bad.status).toBe(401);
    expect(bad.body).toEqual({ error: 'Invalid or expired token' });
  });

  it('when the token’s account no longer exists, then 401 invalid-or-expired token', async () => {
    const { token, userId } = await account();
    await h.users.deleteOne({ _id: userId });

    const res = await change(token, { currentPassword: PASSWORD, newPassword: 'a brand new secret' });

    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'Invalid or expired token' });
  });

  it('when the password changed, then a token issued before it is refused: it cannot change the password again', async () => {
    const { email, token } = await account();
    await change(token, { currentPassword: PASSWORD, newPassword: 'a brand new secret' }).expect(200);

    // The change revokes the old token, within a poll of the revocation feed. Until then a body
    // without a new password is 400 (the token passes, the body does not) and changes nothing.
    await eventually(
      'the token from before the change refused',
      async () => (await change(token, { currentPassword: 'a brand new secret' })).status,
      (status) => status === 401,
    );

    const res = await change(token, { currentPassword: 'a brand new secret', newPassword: 'and another one' });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'Invalid or expired token' });
    await h.http.post('/api/auth/login').send({ email, password: 'a brand new secret' }).expect(200);
  });
});
