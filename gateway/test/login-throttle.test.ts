/**
 * Failed logins against one account, each from a different address, as a botnet would send them:
 * the gateway's per-address limit never fires, and identity's per-account throttle must.
 */
import type { RunningSystem } from '@cs/devstack';
import { startTestSystem } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

let system: RunningSystem;
let address = 0;

beforeAll(async () => {
  // One trusted proxy hop, so X-Forwarded-For names the client; three auth requests a minute each.
  system = await startTestSystem({ env: { TRUST_PROXY: '1', AUTH_RATE_LIMIT: '3' } });
}, 60_000);
afterAll(async () => {
  await system?.stop();
});

/** A login from an address never seen before. */
async function login(email: string, password: string) {
  address += 1;
  const res = await fetch(`${system.gatewayUrl}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': `198.51.100.${address}` },
    body: JSON.stringify({ email, password }),
  });
  return {
    status: res.status,
    body: (await res.json()) as Record<string, unknown>,
    retryAfter: res.headers.get('retry-after'),
  };
}

async function register(email: string, password: string): Promise<void> {
  address += 1;
  const res = await fetch(`${system.gatewayUrl}/api/auth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': `198.51.100.${address}` },
    body: JSON.stringify({ email, password }),
  });
  expect(res.status).toBe(201);
}

describe('failed logins against one account from many addresses', () => {
  it('when five have failed, then the sixth is refused with 429 and Retry-After, even with the right password, until the delay is over', async () => {
    const email = `victim-${Date.now()}@example.com`;
    await register(email, 'the right password');

    const failures = [];
    for (let i = 0; i < 5; i++) failures.push(await login(email, `guess number ${i}`));
    expect(failures.map((r) => r.status)).toEqual([401, 401, 401, 401, 401]);

    const throttled = await login(email, 'the right password');
    expect(throttled).toEqual({
      status: 429,
      body: { error: 'Too many requests, please try again later' },
      retryAfter: '2',
    });
    // Another account is not affected.
    const other = `bystander-${Date.now()}@example.com`;
    await register(other, 'another password');
    expect((await login(other, 'another password')).status).toBe(200);

    await new Promise((resolve) => setTimeout(resolve, 2100));
    expect((await login(email, 'the right password')).status).toBe(200);
    // The success forgot the failures: a wrong password is a plain 401 again.
    expect((await login(email, 'wrong again')).status).toBe(401);
  });

  it('when the address has no account, then the answers are exactly the same: nothing tells whether it exists', async () => {
    const stamp = Date.now();
    const real = `real-${stamp}@example.com`;
    const unknown = `unknown-${stamp}@example.com`;
    await register(real, 'a real password');

    const answers = async (email: string) => {
      const seen = [];
      for (let i = 0; i < 7; i++) seen.push(await login(email, `not it ${i}`));
      return seen;
    };
    const forReal = await answers(real);
    const forUnknown = await answers(unknown);
    expect(forReal.map((r) => r.status)).toEqual([401, 401, 401, 401, 401, 429, 429]);
    expect(forUnknown).toEqual(forReal);
  });
});
