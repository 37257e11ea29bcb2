/**
 * Rate limits with several gateways: counted in one Redis, a client gets the configured limit in
 * total, whichever gateway each request reaches; counted in each gateway's memory, it gets the
 * limit once per gateway. While Redis is away the auth limit refuses (JSON 503) and the general
 * limit lets requests through, and once Redis is back the limits count again, with no restart.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort, type RunningServer, startRedis } from '@cs/devstack';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { echoUpstream, everyUpstreamAt, type GatewayProcess, spawnGateway } from './helpers';

const LIMIT = 5;
const dataDir = mkdtempSync(join(tmpdir(), 'shared-limits-'));
let upstream: Awaited<ReturnType<typeof echoUpstream>>;
let redis: RunningServer;
const gateways: GatewayProcess[] = [];

/** Two gateways in front of the same upstream, with the auth limit at LIMIT a minute. */
async function twoGateways(env: Record<string, string> = {}): Promise<GatewayProcess[]> {
  const started = await Promise.all(
    [1, 2].map(() =>
      spawnGateway({ ...everyUpstreamAt(upstream.url), AUTH_RATE_LIMIT: String(LIMIT), RATE_LIMIT: '600', ...env }),
    ),
  );
  gateways.push(...started);
  return started;
}

/** `n` logins, one after the other, taking turns between the gateways; the statuses. */
async function logins(through: GatewayProcess[], n: number): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < n; i++) {
    const gateway = through[i % through.length] as GatewayProcess;
    const res = await fetch(`${gateway.url}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'ada@example.com', password: 'wrong' }),
    });
    await res.arrayBuffer();
    statuses.push(res.status);
  }
  return statuses;
}

const count = (statuses: number[], status: number) => statuses.filter((s) => s === status).length;

beforeAll(async () => {
  upstream = await echoUpstream();
  redis = await startRedis({ dataDir });
});
afterAll(async () => {
  await Promise.all(gateways.map((g) => g.stop()));
  await redis?.stop();
  await upstream?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('rate limits across two gateways', () => {
  it('when each counts in its own memory, then a client gets the auth limit once per gateway: twice in all', async () => {
    const statuses = await logins(await twoGateways(), 4 * LIMIT);
    expect(count(statuses, 200)).toBe(2 * LIMIT);
    expect(count(statuses, 429)).toBe(2 * LIMIT);
  });

  describe('counting in one Redis', () => {
    let shared: GatewayProcess[];
    beforeAll(async () => {
      shared = await twoGateways({ REDIS_URL: redis.url });
    });

    it('when a client logs in through both, then exactly the auth limit is admitted in all', async () => {
      const statuses = await logins(shared, 4 * LIMIT);
      expect(statuses.slice(0, LIMIT)).toEqual(Array(LIMIT).fill(200));
      expect(count(statuses, 429)).toBe(3 * LIMIT);
    });

    it('when Redis is killed, then auth answers a JSON 503 at once, other routes still pass, and once Redis is back the limits count again without a restart', async () => {
      const port = redis.port as number;
      redis.child?.process.kill('SIGKILL');
      await redis.child?.exited;

      const started = Date.now();
      const refused = await fetch(`${shared[0]?.url}/api/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      expect(refused.status).toBe(503);
      expect(await refused.json()).toEqual({ error: 'Service temporarily unavailable' });
      expect(Date.now() - started).toBeLessThan(1000);
      for (const gateway of shared) {
        const read = await fetch(`${gateway.url}/api/posts`);
        await read.arrayBuffer();
        expect(read.status).toBe(200);
      }

      redis = await startRedis({ dataDir, port });
      // Reconnecting takes each gateway up to a second; until then auth is still 503.
      const back = Date.now();
      for (const gateway of shared) {
        while ((await logins([gateway], 1))[0] === 503) {
          if (Date.now() - back > 10_000) throw new Error(`${gateway.url} did not reconnect to Redis`);
          await sleep(100);
        }
      }
      // Two logins admitted above, one by each gateway, counted in the new Redis.
      const keys = new Redis(redis.url);
      try {
        expect(await keys.get('rl:auth:127.0.0.1')).toBe('2');
      } finally {
        keys.disconnect();
      }
      const statuses = await logins(shared, 2 * LIMIT);
      expect(count(statuses, 200)).toBe(LIMIT - 2);
      expect(count(statuses, 429)).toBe(LIMIT + 2);
    });
  });

  it('when a gateway starts while its Redis is down, then auth answers 503 until Redis comes, and then the limit counts', async () => {
    const late = mkdtempSync(join(tmpdir(), 'shared-limits-late-'));
    const port = await freePort();
    const gateway = await spawnGateway({
      ...everyUpstreamAt(upstream.url),
      AUTH_RATE_LIMIT: String(LIMIT),
      REDIS_URL: `redis://127.0.0.1:${port}`,
    });
    gateways.push(gateway);
    let server: RunningServer | undefined;
    try {
      expect(await logins([gateway], 2)).toEqual([503, 503]);
      server = await startRedis({ dataDir: late, port });
      const back = Date.now();
      while ((await logins([gateway], 1))[0] === 503) {
        if (Date.now() - back > 10_000) throw new Error('the gateway did not reconnect to Redis');
        await sleep(100);
      }
      // One admitted above; the rest of the limit, then 429.
      expect(await logins([gateway], LIMIT)).toEqual([...Array(LIMIT - 1).fill(200), 429]);
    } finally {
      await server?.stop();
      rmSync(late, { recursive: true, force: true });
    }
  });
});
