/**
 * Logout's Bearer token is checked at the gateway: one that is not ours is 401 there, before the
 * hop; one we signed reaches identity, expired or revoked as it may be, for identity to end what
 * it can (an expired or already revoked token answers 204 there and adds nothing).
 */
import { join } from 'node:path';
import { signToken } from '@cs/auth';
import { type Child, freePort, httpOk, REPO_ROOT, spawnChild, waitFor } from '@cs/devstack';
import { newUserId, TEST_JWT_SECRET, tokenFor } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

let child: Child;
let base: string;

beforeAll(async () => {
  const port = await freePort();
  // The gateway with a stand-in identity that answers every request it gets (201 for a POST).
  child = spawnChild({
    name: 'logout-guard-gateway',
    command: process.execPath,
    args: [join(REPO_ROOT, 'gateway/dist/test/in-process-fixture.js')],
    env: { PORT: String(port), JWT_SECRET: TEST_JWT_SECRET },
    logFile: join(process.env.TEST_DATA_DIR ?? join(REPO_ROOT, '.data'), 'logs', `logout-guard-gateway-${port}.log`),
  });
  base = `http://127.0.0.1:${port}`;
  await waitFor('the gateway', () => httpOk(`${base}/healthz`), { child });
});

afterAll(async () => {
  await child?.stop();
});

const logout = (authorization?: string) =>
  fetch(`${base}/api/auth/logout`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
    body: '{}',
  });

describe('logout at the gateway', () => {
  it('when the Bearer token is not ours (another key, not a token, not Bearer), then the gateway answers 401 and identity never sees it', async () => {
    const otherKey = signToken(newUserId(), { secret: `${TEST_JWT_SECRET}-not-ours`, expiresIn: '1h' });
    for (const authorization of [`Bearer ${otherKey}`, 'Bearer not-a-token', `Basic ${tokenFor(newUserId())}`]) {
      const res = await logout(authorization);
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ error: expect.any(String) });
    }
  });

  it('when the token is ours, valid or expired, or there is none, then the request reaches identity', async () => {
    const expired = signToken(
      newUserId(),
      { secret: TEST_JWT_SECRET, expiresIn: '30m' },
      Math.floor(Date.now() / 1000) - 3600,
    );
    for (const authorization of [`Bearer ${tokenFor(newUserId())}`, `Bearer ${expired}`, undefined]) {
      const res = await logout(authorization);
      // The stand-in's answer: it saw the request.
      expect(res.status).toBe(201);
      expect(((await res.json()) as { url: string }).url).toBe('/api/auth/logout');
    }
  });
});
