import { refusal, TEST_JWT_SECRET } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import jwt from 'jsonwebtoken';
import { type IdentityHarness, startIdentity, uniqueEmail } from './helpers';

const PASSWORD = 'correct horse battery';
let h: IdentityHarness;

beforeAll(async () => {
  h = await startIdentity(__filename);
});
afterAll(async () => {
  await h.db.drop();
});

describe('POST /api/auth/register', () => {
  it('when the email and password are valid, then 201 with a token for the new user', async () => {
    const email = uniqueEmail();
    const res = await h.http.post('/api/auth/register').send({ email, password: PASSWORD });

    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(['emailVerified', 'expiresIn', 'refreshToken', 'token']);
    const user = await h.users.findOne({ email }).lean();
    expect(user).not.toBeNull();
    const payload = jwt.verify(res.body.token, TEST_JWT_SECRET) as jwt.JwtPayload;
    expect(payload.id).toBe(user?._id.toHexString());
  });

  it('when a user is created, then only a bcrypt hash of the password is stored, with timestamps', async () => {
    const email = uniqueEmail();
    await h.http.post('/api/auth/register').send({ email, password: PASSWORD }).expect(201);

    const user = await h.users.findOne({ email }).select('+password').lean();
    expect(user?.password).toMatch(/^\$2[aby]\$04\$.{53}$/);
    expect(user?.password).not.toContain(PASSWORD);
    expect(user?.createdAt).toBeInstanceOf(Date);
    expect(user?.updatedAt).toBeInstanceOf(Date);
  });

  it('when the email has capitals and spaces, then it is stored trimmed and lowercased', async () => {
    const email = uniqueEmail('Mixed.Case');
    await h.http
      .post('/api/auth/register')
      .send({ email: `  ${email.toUpperCase()}\t`, password: PASSWORD })
      .expect(201);

    expect(await h.users.countDocuments({ email: email.toLowerCase() })).toBe(1);
  });

  it.each([
    ['no email', { password: PASSWORD }],
    ['no password', { email: 'a@example.com' }],
    ['an empty email', { email: '', password: PASSWORD }],
    ['an empty password', { email: 'a@example.com', password: '' }],
    ['a blank email', { email: '   ', password: PASSWORD }],
    ['null values', { email: null, password: null }],
    ['an empty body', {}],
  ])('when the body has %s, then 400 email-and-password-required', async (_case, body) => {
    const res = await h.http.post('/api/auth/register').send(body);

    expect(res.status).toBe(400);
    expect(res.body).toEqual(refusal('Email and password are required'));
  });

  it('when the email is already registered, in any letter case, then 400 already-registered', async () => {
    const email = uniqueEmail();
    await h.http.post('/api/auth/register').send({ email, password: PASSWORD }).expect(201);

    for (const again of [email, email.toUpperCase(), ` ${email} `]) {
      const res = await h.http.post('/api/auth/register').send({ email: again, password: 'another password' });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'Email is already registered' });
    }
    expect(await h.users.countDocuments({ email })).toBe(1);
  });

  it('when 20 registrations of one email arrive at once, then exactly one succeeds and one user exists', async () => {
    const email = uniqueEmail('race');
    const results = await Promise.all(
      // From addresses of their own: the race is the address's unique index, not one client's share.
      Array.from({ length: 20 }, (_, i) =>
        h.http
          .post('/api/auth/register')
          .set('x-internal-client-address', `192.0.2.${i}`)
          .send({ email, password: PASSWORD }),
      ),
    );

    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 400)).toHaveLength(19);
    for (const r of results.filter((r) => r.status === 400)) {
      expect(r.body).toEqual({ error: 'Email is already registered' });
    }
    expect(await h.users.countDocuments({ email })).toBe(1);
  });

  it.each([
    ['an operator object', { email: { $gt: '' }, password: PASSWORD }],
    ['an operator in the password', { email: 'op@example.com', password: { $ne: null } }],
    ['an array', { email: ['a@example.com'], password: PASSWORD }],
    ['a number', { email: 'n@example.com', password: 12345678 }],
    ['a boolean', { email: true, password: PASSWORD }],
  ])('when the email or password is %s, then 400 and no user is created', async (_case, body) => {
    const before = await h.users.estimatedDocumentCount();
    const res = await h.http.post('/api/auth/register').send(body);

    expect(res.status).toBe(400);
    expect(res.body).toEqual(refusal('Email and password must be strings'));
    expect(await h.users.estimatedDocumentCount()).toBe(before);
  });

  it.each([
    'no-at-sign',
    'a@',
    '@example.com',
    'two@@example.com',
    'spa ce@example.com',
    // A lone surrogate (x-wellFormed): JSON carries it, the pattern alone no longer refuses it.
    'lone\ud800@example.com',
    'lone@example\udfff.com',
  ])('when the email is %j, then 400 invalid-email', async (email) => {
    const res = await h.http.post('/api/auth/register').send({ email, password: PASSWORD });

    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/valid address/);
  });

  it('when the email is 254 characters, then 201; at 255, then 400', async () => {
    const domain = '@example.com';
    const local = uniqueEmail().split('@')[0] ?? '';
    const at254 = local.padEnd(254 - domain.length, 'a') + domain;
    expect(at254).toHaveLength(254);
    await h.http.post('/api/auth/register').send({ email: at254, password: PASSWORD }).expect(201);

    const res = await h.http.post('/api/auth/register').send({ email: `b${at254}`, password: PASSWORD });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/254/);
  });

  it('when the password is 7 characters, then 400; at 8, then 201', async () => {
    const short = await h.http.post('/api/auth/register').send({ email: uniqueEmail(), password: '1234567' });
    expect(short.status).toBe(400);
    expect(short.body).toEqual(refusal('Password must be at least 8 characters'));

    await h.http.post('/api/auth/register').send({ email: uniqueEmail(), password: '12345678' }).expect(201);
  });

  it('when the password is exactly 72 bytes of UTF-8, then 201; at 73 bytes, then 400', async () => {
    const euro72 = '€'.repeat(24); // 3 bytes each
    expect(Buffer.byteLength(euro72)).toBe(72);
    await h.http.post('/api/auth/register').send({ email: uniqueEmail(), password: euro72 }).expect(201);
    await h.http
      .post('/api/auth/register')
      .send({ email: uniqueEmail(), password: 'x'.repeat(72) })
      .expect(201);

    for (const password of ['x'.repeat(73), `${euro72}x`, `${'x'.repeat(71)}€`]) {
      const res = await h.http.post('/api/auth/register').send({ email: uniqueEmail(), password });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(refusal('Password must be at most 72 bytes'));
    }
  });

  it('when the body has extra fields such as _id or createdAt, then they are not written', async () => {
    const email = uniqueEmail();
    const forgedId = '0123456789abcdef01234567';
    await h.http
      .post('/api/auth/register')
      .send({ email, password: PASSWORD, _id: forgedId, createdAt: '2001-01-01T00:00:00Z', role: 'admin' })
      .expect(201);

    const user = await h.users.findOne({ email }).lean();
    expect(user?._id.toHexString()).not.toBe(forgedId);
    expect(user?.createdAt.getUTCFullYear()).toBeGreaterThan(2001);
    expect(user).not.toHaveProperty('role');
  });

  it('when the database fails unexpectedly, then 500 registration-failed and the cause stays in the log', async () => {
    const spy = jest.spyOn(h.users, 'create').mockRejectedValueOnce(new Error('disk on fire') as never);
    try {
      const res = await h.http.post('/api/auth/register').send({ email: uniqueEmail(), password: PASSWORD });

      expect(res.status).toBe(500);
      expect(res.body).toEqual({ error: 'Registration failed' });
      expect(h.logs.text()).toContain('disk on fire');
    } finally {
      spy.mockRestore();
    }
  });

  it('when anything is registered, then the password appears in no response and no log line', async () => {
    const secret = `very-secret-${Date.now()}`;
    const email = uniqueEmail();
    const responses = [
      await h.http.post('/api/auth/register').send({ email, password: secret }),
      await h.http.post('/api/auth/register').send({ email, password: secret }),
      await h.http.post('/api/auth/login').send({ email, password: secret }),
      await h.http.post('/api/auth/login').send({ email, password: `${secret}!` }),
    ];

    expect(responses.map((r) => r.status)).toEqual([201, 400, 200, 401]);
    for (const r of responses) expect(r.text).not.toContain(secret);
    expect(h.logs.entries().some((e) => e.path === '/api/auth/register')).toBe(true);
    expect(h.logs.text()).not.toContain(secret);
  });
});
