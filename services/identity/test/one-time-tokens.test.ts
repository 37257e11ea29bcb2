/**
 * One-time tokens on the run's real database (FerretDB by default, where a filtered update is not
 * atomic): a token stands for its payload once, a newer token for the subject supersedes it, and of
 * redemptions racing with one token exactly one succeeds.
 */
import { HttpError } from '@cs/errors';
import { openTestDatabase, type TestDatabase } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createOneTimeTokens } from '../src/one-time-tokens/one-time-tokens';

let db: TestDatabase;
let clock = Date.now();
const invalid = () => new HttpError(400, 'Invalid or expired token');
const store = () =>
  createOneTimeTokens<{ email: string }>(db.connection, { purpose: 'test', ttlMs: 60_000, invalid, now: () => clock });
const refused = { status: 400, message: 'Invalid or expired token' };

beforeAll(async () => {
  db = await openTestDatabase(__filename);
});
afterAll(async () => {
  await db.drop();
});

describe('one-time tokens', () => {
  it('when a token is redeemed, then it gives its subject and payload, and a second redemption is refused', async () => {
    const tokens = store();
    const token = await tokens.issue('a1', { email: 'a@example.com' });
    await expect(tokens.redeem(token)).resolves.toEqual({ subject: 'a1', payload: { email: 'a@example.com' } });
    await expect(tokens.redeem(token)).rejects.toMatchObject(refused);
  });

  it('when a newer token is issued for the subject, then the older one is refused and the newer one works', async () => {
    const tokens = store();
    const older = await tokens.issue('b1', { email: 'old@example.com' });
    const newer = await tokens.issue('b1', { email: 'new@example.com' });
    await expect(tokens.redeem(older)).rejects.toMatchObject(refused);
    await expect(tokens.redeem(newer)).resolves.toMatchObject({ payload: { email: 'new@example.com' } });
  });

  it('when the lifetime has passed, or the token is malformed or altered, then it is refused', async () => {
    const tokens = store();
    const expiring = await tokens.issue('c1', { email: 'c@example.com' });
    const altered = `${expiring.slice(0, -1)}${expiring.endsWith('A') ? 'B' : 'A'}`;
    await expect(tokens.redeem(altered)).rejects.toMatchObject(refused);
    await expect(tokens.redeem('not a token')).rejects.toMatchObject(refused);
    clock += 60_001;
    await expect(tokens.redeem(expiring)).rejects.toMatchObject(refused);
  });

  it('when ten redemptions of one token race, then exactly one succeeds, in each of 5 tries', async () => {
    const tokens = store();
    for (let i = 0; i < 5; i++) {
      const token = await tokens.issue(`race${i}`, { email: 'race@example.com' });
      const outcomes = await Promise.allSettled(Array.from({ length: 10 }, () => store().redeem(token)));
      expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    }
  });

  it('when a subject is forgotten, then its token is refused, and issuedAt says when the live one was issued', async () => {
    const tokens = store();
    const token = await tokens.issue('d1', { email: 'd@example.com' });
    expect((await tokens.issuedAt('d1'))?.getTime()).toBe(clock);
    await tokens.forget('d1');
    expect(await tokens.issuedAt('d1')).toBeUndefined();
    await expect(tokens.redeem(token)).rejects.toMatchObject(refused);
  });
});
