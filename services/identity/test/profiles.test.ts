/**
 * Display names: given at registration or set later by the account's owner, read by anyone for
 * up to 50 accounts at once, and never with an address.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type IdentityHarness, startIdentity, TEST_PASSWORD, uniqueEmail } from './helpers';

let h: IdentityHarness;

beforeAll(async () => {
  h = await startIdentity(__filename);
});
afterAll(async () => {
  await h.db.drop();
});

async function register(displayName?: string): Promise<{ id: string; token: string; email: string }> {
  const email = uniqueEmail('profile');
  const res = await h.http
    .post('/api/auth/register')
    .send({ email, password: TEST_PASSWORD, ...(displayName === undefined ? {} : { displayName }) })
    .expect(201);
  const me = await h.http.get('/api/auth/me').set('Authorization', `Bearer ${res.body.token}`).expect(200);
  return { id: me.body._id, token: res.body.token, email };
}

const names = (ids: string[]) => h.http.get('/api/users').query({ ids: ids.join(',') });

describe('display names', () => {
  it('given at registration, stored trimmed, and told by /me; none is null', async () => {
    const named = await register('  Ada Lovelace ');
    const me = await h.http.get('/api/auth/me').set('Authorization', `Bearer ${named.token}`).expect(200);
    expect(me.body).toEqual({
      _id: named.id,
      email: named.email,
      displayName: 'Ada Lovelace',
      emailVerified: false,
      createdAt: expect.any(String),
    });
    const unnamed = await register();
    const other = await h.http.get('/api/auth/me').set('Authorization', `Bearer ${unnamed.token}`).expect(200);
    expect(other.body.displayName).toBeNull();
  });

  it('PATCH /me sets, changes and clears it (null); the answer is the account as it now is', async () => {
    const { id, token } = await register();
    const auth = { Authorization: `Bearer ${token}` };
    const set = await h.http.patch('/api/auth/me').set(auth).send({ displayName: 'Grace' }).expect(200);
    expect(set.body).toMatchObject({ _id: id, displayName: 'Grace' });
    await h.http.patch('/api/auth/me').set(auth).send({ displayName: 'Grace H. 👩🏽' }).expect(200);
    expect((await names([id])).body).toEqual([{ _id: id, displayName: 'Grace H. 👩🏽' }]);
    const cleared = await h.http.patch('/api/auth/me').set(auth).send({ displayName: null }).expect(200);
    expect(cleared.body.displayName).toBeNull();
    expect((await names([id])).body).toEqual([{ _id: id, displayName: null }]);
  });

  it.each([
    ['empty', ''],
    ['only spaces', '    '],
    ['51 characters', 'a'.repeat(51)],
    ['a line break', 'Ada\nLovelace'],
    ['a bidirectional override', 'Ada\u202eecalevoL'],
    ['a zero-width space', 'Ada\u200bL'],
    ['a number', 42],
  ])('a name that is %s is refused with 400 and what a name may be; nothing changes', async (_, displayName) => {
    const { id, token } = await register('Before');
    const res = await h.http
      .patch('/api/auth/me')
      .set('Authorization', `Bearer ${token}`)
      .send({ displayName })
      .expect(400);
    expect(res.body).toEqual({
      errors: [
        {
          field: 'displayName',
          message: 'displayName must be 1 to 50 characters once trimmed, with no control or formatting characters',
        },
      ],
    });
    expect((await names([id])).body).toEqual([{ _id: id, displayName: 'Before' }]);
  });

  it('PATCH /me needs a token, and a body with displayName', async () => {
    await h.http.patch('/api/auth/me').send({ displayName: 'X' }).expect(401);
    const { token } = await register();
    const res = await h.http.patch('/api/auth/me').set('Authorization', `Bearer ${token}`).send({}).expect(400);
    expect(res.body.errors).toEqual([
      { field: 'displayName', message: 'displayName is required: a name, or null to remove it' },
    ]);
  });

  it('registration refuses a bad name the same way, and creates no account', async () => {
    const email = uniqueEmail('badname');
    const res = await h.http
      .post('/api/auth/register')
      .send({ email, password: TEST_PASSWORD, displayName: 'a\u0007b' })
      .expect(400);
    expect(res.body.error).toBe(
      'displayName must be 1 to 50 characters once trimmed, with no control or formatting characters',
    );
    await h.http.post('/api/auth/login').send({ email, password: TEST_PASSWORD }).expect(401);
  });
});

describe('GET /api/users?ids=', () => {
  it('answers the known accounts among up to 50 ids, in one request, with no address; unknown ids are left out', async () => {
    const a = await register('Ann');
    const b = await register();
    const unknown = '0123456789abcdef01234567';
    const res = await names([a.id, unknown, b.id, a.id]).expect(200);
    expect(res.body).toHaveLength(2);
    expect(res.body).toEqual(
      expect.arrayContaining([
        { _id: a.id, displayName: 'Ann' },
        { _id: b.id, displayName: null },
      ]),
    );
    expect(JSON.stringify(res.body)).not.toContain('@');
  });

  it.each([
    ['no ids', undefined],
    ['an empty list', ''],
    ['an id that is not one', 'abc'],
    ['51 ids', Array.from({ length: 51 }, (_, i) => i.toString(16).padStart(24, '0')).join(',')],
  ])('%s is 400', async (_, ids) => {
    const res = await h.http
      .get('/api/users')
      .query(ids === undefined ? {} : { ids })
      .expect(400);
    expect(res.body).toEqual({ error: 'ids must be 1 to 50 account ids, comma-separated' });
  });

  it('50 ids are one request', async () => {
    const ids = Array.from({ length: 50 }, (_, i) => i.toString(16).padStart(24, '0'));
    await names(ids).expect(200, []);
  });
});
