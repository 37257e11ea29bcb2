import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  ACCOUNT_FREE_FAILURES,
  ACCOUNT_MAX_DELAY_MS,
  delayAfter,
  FREE_FAILURES,
  KNOWN_FOR_MS,
  MAX_DELAY_MS,
} from '../src/login-defence/login-throttle';
import { type IdentityHarness, startIdentity, uniqueEmail } from './helpers';

let h: IdentityHarness;

beforeAll(async () => {
  h = await startIdentity(__filename);
});
afterAll(async () => {
  await h.db.drop();
});

describe('the login throttle’s delays', () => {
  it('when failures pile up, then no delay before the threshold, 2 s at it, doubling, and capped', () => {
    expect([0, 1, 4].map((n) => delayAfter(n))).toEqual([0, 0, 0]);
    expect([5, 6, 7, 8].map((n) => delayAfter(n))).toEqual([2000, 4000, 8000, 16000]);
    expect(delayAfter(FREE_FAILURES + 20)).toBe(MAX_DELAY_MS);
    expect(delayAfter(FREE_FAILURES + 10_000)).toBe(MAX_DELAY_MS);
    // The account-wide count starts later and never makes anyone wait more than a minute.
    expect(delayAfter(ACCOUNT_FREE_FAILURES - 1, ACCOUNT_FREE_FAILURES, ACCOUNT_MAX_DELAY_MS)).toBe(0);
    expect(delayAfter(ACCOUNT_FREE_FAILURES + 40, ACCOUNT_FREE_FAILURES, ACCOUNT_MAX_DELAY_MS)).toBe(60_000);
  });
});

describe('logins of one account at the same moment', () => {
  it('when 12 log in at once, right and wrong, then each gets 200 or 401: none loses the race to create a record', async () => {
    const email = uniqueEmail('together');
    await h.http.post('/api/auth/register').send({ email, password: 'the right password' }).expect(201);
    for (let round = 0; round < 3; round++) {
      const answers = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          h.http
            .post('/api/auth/login')
            .set('x-internal-client-address', `203.0.113.${round}`)
            .send({ email, password: i % 2 === 0 ? 'the right password' : `wrong ${i}` }),
        ),
      );
      expect(answers.map((a) => a.status).sort()).toEqual([...Array(6).fill(200), ...Array(6).fill(401)]);
      await h.db.connection.collection('login_failures').deleteMany({});
    }
  });
});

describe('the login throttle’s records', () => {
  const failures = () =>
    h.db.connection.collection<{ _id: string; failures: number; lastFailureAt: Date }>('login_failures');

  it('when a login fails, then its records hold a fixed-size hash, never the address; a malformed address is not counted', async () => {
    const email = uniqueEmail('hashed');
    const before = await failures().countDocuments();
    await h.http.post('/api/auth/login').send({ email, password: 'not the password' }).expect(401);
    const docs = await failures().find({}).toArray();
    expect(docs.length - before).toBe(2); // this address's count, and the account's
    expect(docs.every((d) => /^[A-Za-z0-9_-]{43}$/.test(d._id))).toBe(true);
    expect(JSON.stringify(docs)).not.toContain(email);

    await h.http
      .post('/api/auth/login')
      .send({ email: `${'x'.repeat(5000)}@example.com`, password: 'p' })
      .expect(401);
    await h.http.post('/api/auth/login').send({ email: 'no-at-sign', password: 'p' }).expect(401);
    expect(await failures().countDocuments()).toBe(docs.length);
  });

  it('when failures were forgotten an hour ago, or an address was known too long ago, then a prune deletes their records and keeps the recent ones', async () => {
    await failures().insertOne({ _id: 'old-failure', failures: 9, lastFailureAt: new Date(Date.now() - 61 * 60_000) });
    const known = h.db.connection.collection<{ _id: string; at: Date }>('login_known');
    await known.insertOne({ _id: 'old-known', at: new Date(Date.now() - KNOWN_FOR_MS - 60_000) });
    await known.insertOne({ _id: 'recent-known', at: new Date() });
    const recent = await failures().countDocuments();

    expect(await h.throttle.prune()).toBe(2);
    expect(await failures().findOne({ _id: 'old-failure' })).toBeNull();
    expect(await failures().countDocuments()).toBe(recent - 1);
    expect(await known.findOne({ _id: 'old-known' })).toBeNull();
    expect(await known.findOne({ _id: 'recent-known' })).not.toBeNull();
  });
});
