import { setTimeout as sleep } from 'node:timers/promises';
/**
 * Password work (bcrypt) runs in a bulkhead: one at a time here, at a cost that takes tens of
 * milliseconds, so requests sent together really wait in line.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type IdentityHarness, registered, startIdentity, TEST_PASSWORD, uniqueEmail } from './helpers';

let h: IdentityHarness;
/** Lookups of accounts since the test began. */
const lookups: string[] = [];
/** For each write of a user or a session, whether a place in the bulkhead was taken then. */
const writes: { what: string; placesTaken: number }[] = [];

beforeAll(async () => {
  h = await startIdentity(__filename, { BCRYPT_COST: 10, BCRYPT_CONCURRENCY: 1 });
  h.db.connection.set('debug', (collection: string, method: string) => {
    if (collection === 'users') lookups.push(method);
    if ((collection === 'users' || collection === 'sessions') && (method === 'insertOne' || method === 'insertMany')) {
      writes.push({ what: `${collection}.${method}`, placesTaken: h.passwordWork.load().running });
    }
  });
});
afterAll(async () => {
  await h.db.drop();
});

let addresses = 0;
const freshAddress = () => {
  addresses += 1;
  return `198.51.100.${addresses}`;
};

/** A login from `address`; resolves to its status, and records when it finished. */
function login(address: string, email: string, password: string, finished: string[], label: string) {
  return h.http
    .post('/api/auth/login')
    .set('x-internal-client-address', address)
    .send({ email, password })
    .then((res) => {
      finished.push(label);
      return res;
    });
}

describe('the password bulkhead', () => {
  it('when a crowd of new addresses sends logins at once, then an address that logged in before is served ahead of them', async () => {
    const known = freshAddress();
    const { email } = await registered(h, 'known');
    await h.http
      .post('/api/auth/login')
      .set('x-internal-client-address', known)
      .send({ email, password: TEST_PASSWORD })
      .expect(200);
    const finished: string[] = [];

    const crowd = Array.from({ length: 6 }, (_, i) =>
      login(freshAddress(), uniqueEmail('nobody'), 'wrong password', finished, `crowd-${i}`),
    );
    await sleep(20);
    const mine = login(known, email, TEST_PASSWORD, finished, 'known');

    expect((await mine).status).toBe(200);
    await Promise.all(crowd);
    // At most the crowd's pieces already running or handed a place finish first.
    expect(finished.indexOf('known')).toBeLessThanOrEqual(2);
  });

  it('when one address sends more than its share at once, then the surplus gets 429 with Retry-After', async () => {
    const address = freshAddress();
    const answers = await Promise.all(
      Array.from({ length: 24 }, () => login(address, uniqueEmail('nobody'), 'wrong password', [], 'x')),
    );

    const refused = answers.filter((r) => r.status === 429);
    expect(refused.length).toBeGreaterThanOrEqual(1);
    for (const r of refused) {
      expect(r.body.error).toMatch(/^Too many password requests at once/);
      expect(r.headers['retry-after']).toBe('1');
    }
    expect(answers.every((r) => r.status === 401 || r.status === 429)).toBe(true);
  });

  it('when the whole line is full, then the rest get 503 before any account is looked up', async () => {
    lookups.length = 0;
    const answers = await Promise.all(
      Array.from({ length: 48 }, () => login(freshAddress(), uniqueEmail('nobody'), 'wrong password', [], 'x')),
    );

    const refused = answers.filter((r) => r.status === 503);
    expect(refused.length).toBeGreaterThanOrEqual(1);
    for (const r of refused) expect(r.headers['retry-after']).toBe('1');
    // One lookup of the account per login that ran; none for a refused one.
    expect(lookups.filter((m) => m === 'findOne')).toHaveLength(answers.length - refused.length);
  });

  it('when a registration or a login writes its account or session, then its place in line is given back already', async () => {
    writes.length = 0;
    const { email } = await registered(h, 'writes');
    await h.http.post('/api/auth/login').send({ email, password: TEST_PASSWORD }).expect(200);

    // The user, the first session, the second session: hashing waits for none of them.
    expect(writes.map((w) => w.what)).toEqual(['users.insertOne', 'sessions.insertOne', 'sessions.insertOne']);
    expect(writes.map((w) => w.placesTaken)).toEqual([0, 0, 0]);
  });
});
