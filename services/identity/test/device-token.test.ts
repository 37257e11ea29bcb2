/**
 * Device tokens (device-tokens.ts): a device that logged in to an account before goes ahead of a
 * crowd of wrong logins in the password bulkhead, and is not slowed by the failures others caused
 * to the account, until it fails too often itself. Password work is bcrypt at cost 10, one at a
 * time, so requests sent together really wait in line.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { TEST_JWT_SECRET } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createDeviceTokens, DEVICE_TOKEN_TTL_S } from '../src/login-defence/device-tokens';
import { ACCOUNT_FREE_FAILURES, DEVICE_FREE_FAILURES } from '../src/login-defence/login-throttle';
import { type IdentityHarness, registered, startIdentity, TEST_PASSWORD, uniqueEmail } from './helpers';

let h: IdentityHarness;
/** The password bulkhead's pieces, by client, in the order they joined it and the order they started. */
const joined: { client: string; startedBefore: number; waiting: number }[] = [];
const started: string[] = [];

beforeAll(async () => {
  h = await startIdentity(__filename, { BCRYPT_COST: 10, BCRYPT_CONCURRENCY: 1 });
  // The routes call this very bulkhead: watched, not changed.
  const run = h.passwordWork.run.bind(h.passwordWork);
  h.passwordWork.run = (client, work, options) => {
    joined.push({ client, startedBefore: started.length, waiting: h.passwordWork.load().waiting });
    return run(
      client,
      () => {
        started.push(client);
        return work();
      },
      options,
    );
  };
});
afterAll(async () => {
  await h.db.drop();
});

let addresses = 0;
const freshAddress = () => {
  addresses += 1;
  return `198.18.${Math.floor(addresses / 250)}.${(addresses % 250) + 1}`;
};

function login(email: string, password: string, headers: Record<string, string> = {}) {
  return h.http
    .post('/api/auth/login')
    .set('x-internal-client-address', freshAddress())
    .set(headers)
    .send({ email, password });
}

/** An account, and the device token its first login answered. */
async function accountWithDevice(tag: string): Promise<{ email: string; device: string }> {
  const { email } = await registered(h, tag);
  const res = await login(email, TEST_PASSWORD).expect(200);
  return { email, device: String(res.headers['x-device-token']) };
}

/** Failures of others, from as many addresses, until the account's own delay applies to everyone. */
async function othersFailed(email: string): Promise<void> {
  for (let i = 0; i < ACCOUNT_FREE_FAILURES; i++) await h.throttle.failed(email, freshAddress());
}

describe('device tokens', () => {
  it('when a login succeeds, then it answers a device token in X-Device-Token and in an HttpOnly, SameSite=Strict cookie on the auth path', async () => {
    const { email } = await registered(h, 'answered');
    const res = await login(email, TEST_PASSWORD).expect(200);

    const token = res.headers['x-device-token'];
    expect(token).toMatch(/^[\w-]{51}$/);
    const cookies = ([] as string[]).concat((res.headers['set-cookie'] as string[] | undefined) ?? []);
    expect(cookies).toContain(
      `cs_device=${token}; Path=/api/auth; Max-Age=${DEVICE_TOKEN_TTL_S}; HttpOnly; SameSite=Strict`,
    );
    expect(Object.keys(res.body).sort()).toEqual(['emailVerified', 'expiresIn', 'refreshToken', 'token']);
  });

  it('when the password line is full of wrong logins from new addresses, then a login with its device token, from a new address, still gets a place and is served before all of them', async () => {
    const { email, device } = await accountWithDevice('under-attack');
    // One running and 32 waiting fill the line (bcryptBulkhead: 32 a place); the rest get 503.
    const crowd = Array.from({ length: 40 }, () =>
      login(uniqueEmail('nobody'), 'wrong password').then((res) => res.status),
    );
    while (h.passwordWork.load().waiting < 32) await sleep(5);
    // Without its token the person is one of the crowd: no place left.
    expect((await login(email, TEST_PASSWORD)).status).toBe(503);

    const mine = await login(email, TEST_PASSWORD, { 'X-Device-Token': device });

    expect(mine.status).toBe(200);
    const statuses = await Promise.all(crowd);
    expect(statuses.every((s) => s === 401 || s === 503)).toBe(true);
    // It joined behind the crowd (full a moment before: a few may have started since), and was the
    // next piece to start: before every one waiting then.
    const lane = `account ${email}`;
    const join = joined.find((j) => j.client === lane);
    expect(join?.waiting).toBeGreaterThanOrEqual(20);
    expect(started.indexOf(lane)).toBe(join?.startedBefore);
  });

  it('when others’ failures delay every login to the account, then one with its device token, from anywhere, is not delayed, by header or by cookie', async () => {
    const { email, device } = await accountWithDevice('locked-by-others');
    await othersFailed(email);

    const anonymous = await login(email, TEST_PASSWORD);
    expect(anonymous.status).toBe(429);
    await login(email, TEST_PASSWORD, { 'X-Device-Token': device }).expect(200);
    await login(email, TEST_PASSWORD, { Cookie: `cs_refresh=x; cs_device=${device}` }).expect(200);
  });

  it('when a device token fails as many logins as it may, then it is trusted no more: it waits like anyone', async () => {
    const { email, device } = await accountWithDevice('guessing-device');
    for (let i = 0; i < DEVICE_FREE_FAILURES; i++) {
      await login(email, `wrong ${i}`, { 'X-Device-Token': device }).expect(401);
    }
    await othersFailed(email);

    expect((await login(email, TEST_PASSWORD, { 'X-Device-Token': device })).status).toBe(429);
  });

  it('when a device token is another account’s or altered, then it is not trusted', async () => {
    const { email } = await accountWithDevice('target');
    const other = await accountWithDevice('other');
    await othersFailed(email);
    const altered = `${other.device.slice(0, 10)}${other.device[10] === 'A' ? 'B' : 'A'}${other.device.slice(11)}`;

    expect((await login(email, TEST_PASSWORD, { 'X-Device-Token': other.device })).status).toBe(429);
    expect((await login(email, TEST_PASSWORD, { 'X-Device-Token': altered })).status).toBe(429);
    expect((await login(email, TEST_PASSWORD, { 'X-Device-Token': 'not a token' })).status).toBe(429);
  });

  it('when a device token is older than its lifetime, then it proves nothing', () => {
    const tokens = createDeviceTokens({ secret: TEST_JWT_SECRET, secure: false });
    const issuedAt = Date.now();
    const token = tokens.issue('someone@example.com', issuedAt);

    expect(tokens.deviceOf(token, 'someone@example.com', issuedAt)).toMatch(/^[\w-]{22}$/);
    expect(tokens.deviceOf(token, 'someone@example.com', issuedAt + DEVICE_TOKEN_TTL_S * 1000)).toBeUndefined();
    expect(tokens.deviceOf(token, 'someone-else@example.com', issuedAt)).toBeUndefined();
  });
});
