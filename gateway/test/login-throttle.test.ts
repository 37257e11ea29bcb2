import { setTimeout as sleep } from 'node:timers/promises';
/**
 * Failed logins against one account, from one address and from many (as a botnet sends them),
 * through the gateway. TRUST_PROXY lets each request name its own client address.
 */
import type { RunningSystem } from '@cs/devstack';
import { startTestSystem } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

let system: RunningSystem;
let fresh = 0;
/** An address never used before. */
const newAddress = () => {
  fresh += 1;
  return `198.51.${Math.floor(fresh / 250)}.${(fresh % 250) + 1}`;
};

beforeAll(async () => {
  // One trusted proxy hop, so X-Forwarded-For names the client. The gateway's own per-address
  // limit is off, so every answer here is identity's (edge.test.ts covers that limit).
  system = await startTestSystem({ env: { TRUST_PROXY: '1', AUTH_RATE_LIMIT: '0' } });
}, 60_000);
afterAll(async () => {
  await system?.stop();
});

async function post(path: string, from: string, email: string, password: string) {
  const res = await fetch(`${system.gatewayUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': from },
    body: JSON.stringify({ email, password }),
  });
  return {
    status: res.status,
    body: (await res.json()) as Record<string, unknown>,
    retryAfter: res.headers.get('retry-after'),
  };
}
const login = (from: string, email: string, password: string) => post('/api/auth/login', from, email, password);

describe('failed logins from one address', () => {
  it('when five have failed, then that address waits (429 and Retry-After, even with the right password), and another address does not', async () => {
    const email = `pair-${Date.now()}@example.com`;
    expect((await post('/api/auth/register', newAddress(), email, 'the right password')).status).toBe(201);
    const guesser = newAddress();
    const failures = [];
    for (let i = 0; i < 5; i++) failures.push((await login(guesser, email, `guess ${i}`)).status);
    expect(failures).toEqual([401, 401, 401, 401, 401]);

    expect(await login(guesser, email, 'the right password')).toEqual({
      status: 429,
      body: { error: 'Too many requests, please try again later' },
      retryAfter: '2',
    });
    expect((await login(newAddress(), email, 'the right password')).status).toBe(200);
    await sleep(2100);
    expect((await login(guesser, email, 'the right password')).status).toBe(200);
    // The success forgot that address's failures: a wrong password is a plain 401 again.
    expect((await login(guesser, email, 'wrong again')).status).toBe(401);
  });
});

describe('failed logins against one account', () => {
  it('when 50 have failed from 50 addresses, then a new address waits, even with the right password; an address that logged in before does not', async () => {
    const email = `botnet-${Date.now()}@example.com`;
    expect((await post('/api/auth/register', newAddress(), email, 'the right password')).status).toBe(201);
    const home = newAddress();
    expect((await login(home, email, 'the right password')).status).toBe(200);

    const failures = [];
    for (let i = 0; i < 50; i++) failures.push((await login(newAddress(), email, `guess ${i}`)).status);
    expect(new Set(failures)).toEqual(new Set([401]));

    expect(await login(newAddress(), email, 'the right password')).toEqual({
      status: 429,
      body: { error: 'Too many requests, please try again later' },
      retryAfter: '2',
    });
    // The person, from where they logged in before, is not slowed by someone else's guesses.
    expect((await login(home, email, 'the right password')).status).toBe(200);

    await sleep(2100);
    expect((await login(newAddress(), email, 'the right password')).status).toBe(200);
  });

  it('when the address has no account, then the answers are exactly the same: nothing tells whether it exists', async () => {
    const stamp = Date.now();
    const real = `real-${stamp}@example.com`;
    expect((await post('/api/auth/register', newAddress(), real, 'a real password')).status).toBe(201);

    const answers = async (email: string) => {
      const seen = [];
      for (let i = 0; i < 53; i++) seen.push(await login(newAddress(), email, `not it ${i}`));
      return seen;
    };
    const forReal = await answers(real);
    const forUnknown = await answers(`unknown-${stamp}@example.com`);
    expect(forReal.map((r) => r.status)).toEqual([...Array(50).fill(401), 429, 429, 429]);
    // Retry-After counts down the 2 s lockout as the requests go by, for both alike: how far it has
    // counted depends on the machine's pace (a busy CI machine answered 1 where the first run had 2),
    // so it is compared as "within the lockout", and everything else to the letter.
    const counted = (seen: Awaited<ReturnType<typeof answers>>) =>
      seen.map(({ retryAfter, ...rest }) => ({ ...rest, retryAfter: retryAfter && ['1', '2'].includes(retryAfter) }));
    expect(counted(forUnknown)).toEqual(counted(forReal));
    expect(forReal.filter((r) => r.status === 429).every((r) => r.retryAfter !== undefined)).toBe(true);
  });
});
