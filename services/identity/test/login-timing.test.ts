/**
 * A login for an e-mail that has no account, beside a wrong password for one that has, at a real
 * bcrypt cost: no compare runs for the unknown address (a botnet of made-up addresses would spend
 * the people's CPU on them), and yet the two take the same time, as the contract asks ("the two
 * cases must be indistinguishable"): compare-clock.ts.
 */
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import bcrypt from 'bcrypt';
import { type IdentityHarness, startIdentity, uniqueEmail } from './helpers';

const PASSWORD = 'correct horse battery';
/** A cost at which a compare takes tens of milliseconds here: well above the noise of a request. */
const COST = 10;
const ROUNDS = 12;
let h: IdentityHarness;
const accounts: string[] = [];

beforeAll(async () => {
  h = await startIdentity(__filename, { BCRYPT_COST: COST });
  for (let i = 0; i < ROUNDS + 3; i++) {
    const email = uniqueEmail('timing');
    await h.http.post('/api/auth/register').send({ email, password: PASSWORD }).expect(201);
    accounts.push(email);
  }
});
afterAll(async () => {
  await h.db.drop();
});

/** How long a wrong login takes, in ms; from an address of its own, so no throttle is met. */
async function timedLogin(email: string, n: number): Promise<number> {
  const started = performance.now();
  await h.http
    .post('/api/auth/login')
    .set('x-internal-client-address', `10.9.0.${n}`)
    .send({ email, password: `${PASSWORD}x` })
    .expect(401);
  return performance.now() - started;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

describe('a wrong login for an unknown e-mail', () => {
  it('when it is timed beside wrong passwords, then it takes as long, and no compare runs for it', async () => {
    // The clock learns from real compares, as it does from the people's logins.
    for (let i = 0; i < 3; i++) await timedLogin(accounts[ROUNDS + i] as string, 200 + i);
    const compare = jest.spyOn(bcrypt, 'compare');
    const unknown: number[] = [];
    const wrong: number[] = [];
    let comparesForUnknown = 0;
    try {
      for (let i = 0; i < ROUNDS; i++) {
        const before = compare.mock.calls.length;
        unknown.push(await timedLogin(uniqueEmail('nobody'), i));
        comparesForUnknown += compare.mock.calls.length - before;
        wrong.push(await timedLogin(accounts[i] as string, 100 + i));
      }
    } finally {
      compare.mockRestore();
    }

    expect(comparesForUnknown).toBe(0);
    // Each round's two logins side by side: a burst of load on the machine slows both alike.
    const ratio = median(unknown.map((ms, i) => ms / (wrong[i] as number)));
    expect(ratio).toBeGreaterThan(0.75);
    expect(ratio).toBeLessThan(1.33);
  });
});
