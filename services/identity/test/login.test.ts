import { refusal, TEST_JWT_SECRET } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import bcrypt from 'bcrypt';
import jwt from 'jsonwebtoken';
import { type IdentityHarness, startIdentity, uniqueEmail } from './helpers';

const PASSWORD = 'correct horse battery';
let h: IdentityHarness;
let email: string;
let userId: string;

beforeAll(async () => {
  h = await startIdentity(__filename);
  email = uniqueEmail('login');
  const res = await h.http.post('/api/auth/register').send({ email, password: PASSWORD }).expect(201);
  userId = (jwt.decode(res.body.token) as { id: string }).id;
});
afterAll(async () => {
  await h.db.drop();
});

describe('POST /api/auth/login', () => {
  it('when the credentials match, then 200 with a token for that user', async () => {
    const res = await h.http.post('/api/auth/login').send({ email, password: PASSWORD });

    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['emailVerified', 'expiresIn', 'refreshToken', 'token']);
    expect((jwt.verify(res.body.token, TEST_JWT_SECRET) as jwt.JwtPayload).id).toBe(userId);
  });

  it('when the email differs only in case and surrounding spaces, then it is the same account', async () => {
    const res = await h.http.post('/api/auth/login').send({ email: `  ${email.toUpperCase()} `, password: PASSWORD });

    expect(res.status).toBe(200);
    expect((jwt.decode(res.body.token) as { id: string }).id).toBe(userId);
  });

  it('when the email is unknown or the password wrong, then both are 401 with identical bodies', async () => {
    const unknown = await h.http.post('/api/auth/login').send({ email: uniqueEmail('nobody'), password: PASSWORD });
    const wrong = await h.http.post('/api/auth/login').send({ email, password: `${PASSWORD}x` });

    expect(unknown.status).toBe(401);
    expect(wrong.status).toBe(401);
    expect(unknown.body).toEqual({ error: 'Invalid credentials' });
    expect(wrong.text).toBe(unknown.text);
    expect(wrong.headers['content-type']).toBe(unknown.headers['content-type']);
  });

  it('when the email is unknown or cannot be one, then no compare runs; a wrong password is compared', async () => {
    const compare = jest.spyOn(bcrypt, 'compare');
    try {
      await h.http
        .post('/api/auth/login')
        .send({ email: uniqueEmail('nobody'), password: PASSWORD })
        .expect(401);
      await h.http.post('/api/auth/login').send({ email: 'not-an-address', password: PASSWORD }).expect(401);
      const unknownCompares = compare.mock.calls.length;
      await h.http.post('/api/auth/login').send({ email, password: 'wrong password' }).expect(401);

      // The clock measured its first compare against its own hash: at most one, never one per login.
      expect(unknownCompares).toBeLessThanOrEqual(1);
      expect(compare.mock.calls.length).toBe(unknownCompares + 1);
    } finally {
      compare.mockRestore();
    }
  });

  it('when the password has the right first 72 bytes and more after them, then 401, not a truncated match', async () => {
    const long = 'p'.repeat(72);
    const address = uniqueEmail('long');
    await h.http.post('/api/auth/register').send({ email: address, password: long }).expect(201);

    await h.http.post('/api/auth/login').send({ email: address, password: long }).expect(200);
    const res = await h.http.post('/api/auth/login').send({ email: address, password: `${long}extra` });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'Invalid credentials' });
  });

  it.each([
    ['no email', { password: PASSWORD }],
    ['no password', { email: 'a@example.com' }],
    ['empty strings', { email: '', password: '' }],
  ])('when the body has %s, then 400 with the same message as register', async (_case, body) => {
    const res = await h.http.post('/api/auth/login').send(body);

    expect(res.status).toBe(400);
    expect(res.body).toEqual(refusal('Email and password are required'));
  });

  it.each([
    ['operator objects', { email: { $ne: null }, password: { $ne: null } }],
    ['a $gt email', { email: { $gt: '' }, password: PASSWORD }],
    ['a $where password', { email: 'a@example.com', password: { $where: 'sleep(1000)' } }],
    ['arrays', { email: [], password: [] }],
  ])('when the body has %s, then 400 and no query runs', async (_case, body) => {
    const findOne = jest.spyOn(h.users, 'findOne');
    try {
      const res = await h.http.post('/api/auth/login').send(body);

      expect(res.status).toBe(400);
      expect(res.body).toEqual(refusal('Email and password must be strings'));
      expect(findOne).not.toHaveBeenCalled();
    } finally {
      findOne.mockRestore();
    }
  });

  it('when the database fails unexpectedly, then 500 login-failed', async () => {
    const findOne = jest.spyOn(h.users, 'findOne').mockImplementationOnce(() => {
      throw new Error('index corrupted');
    });
    try {
      const res = await h.http.post('/api/auth/login').send({ email, password: PASSWORD });

      expect(res.status).toBe(500);
      expect(res.body).toEqual({ error: 'Login failed' });
      expect(res.text).not.toContain('index corrupted');
    } finally {
      findOne.mockRestore();
    }
  });
});
