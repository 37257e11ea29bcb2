/**
 * Revocation reaches access tokens everywhere: after a logout, the access token presented with it
 * is refused by every gateway and every replica of every service, within 5 s; after "log out
 * everywhere", every older token of the user is; a token issued right after, even within the same
 * second, works at once. Run twice: two gateways behind the balancer with Redis and two replicas of
 * each service, and one of each without Redis. Each process follows identity's revocation log.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { REPO_ROOT, type RunningSystem, startRedis } from '@cs/devstack';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type FaultSystem, OwnServer, recordFigures, sleep, startFaultSystem } from './harness';

const BOUND_MS = 5_000;
const dataDir = join(REPO_ROOT, '.data', 'faults', `revocation-${randomBytes(3).toString('hex')}`);
const running: FaultSystem[] = [];
let redis: OwnServer;

beforeAll(async () => {
  redis = await OwnServer.launch((port) => startRedis({ dataDir, port }));
});
afterAll(async () => {
  await Promise.all(running.map((f) => f.stop()));
  await redis?.stop();
});

interface Pair {
  token: string;
  refreshToken: string;
}

async function json(url: string, init: RequestInit & { token?: string; body?: string } = {}) {
  const { token, ...rest } = init;
  const res = await fetch(url, {
    ...rest,
    headers: {
      'content-type': 'application/json',
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : undefined };
}

/** One protected request per process: every gateway replica, and every replica of every service, called directly. */
function everywhere(system: RunningSystem): { label: string; check: (token: string) => Promise<number> }[] {
  const read = (path: string) => async (base: string, token: string) =>
    (await json(`${base}${path}`, { token })).status;
  const reads = {
    gateway: read('/api/posts/my-posts'),
    identity: read('/api/auth/me'),
    posts: read('/api/posts/my-posts'),
    notes: read('/api/notes'),
    files: async (base: string, token: string) =>
      (
        await json(`${base}/upload-url`, {
          method: 'POST',
          token,
          body: JSON.stringify({ contentType: 'image/png', filename: 'a.png' }),
        })
      ).status,
    // A ticket for a stream: 201 while the token works, as the others' 200.
    realtime: async (base: string, token: string) => {
      const { status } = await json(`${base}/api/realtime/ticket`, { method: 'POST', token });
      return status === 201 ? 200 : status;
    },
  };
  return Object.values(system.replicas)
    .flat()
    .map((p) => ({ label: `${p.name}-${p.replica + 1}`, check: (token: string) => reads[p.name](p.url, token) }));
}

/** Milliseconds until every process answers `want` for `token` (polled every 100 ms), or the bound and more. */
async function untilEverywhere(system: RunningSystem, token: string, want: number): Promise<Record<string, number>> {
  const started = Date.now();
  const reached: Record<string, number> = {};
  const targets = everywhere(system);
  while (Object.keys(reached).length < targets.length && Date.now() - started < 2 * BOUND_MS) {
    await Promise.all(
      targets
        .filter((t) => reached[t.label] === undefined)
        .map(async (t) => {
          if ((await t.check(token)) === want) reached[t.label] = Date.now() - started;
        }),
    );
    await sleep(100);
  }
  return reached;
}

async function statusesEverywhere(system: RunningSystem, token: string): Promise<Record<string, number>> {
  const targets = everywhere(system);
  return Object.fromEntries(await Promise.all(targets.map(async (t) => [t.label, await t.check(token)] as const)));
}

/** Waits for the next whole second, so that two tokens of one user issued on both sides of it differ. */
async function nextSecond(): Promise<void> {
  await sleep(1000 - (Date.now() % 1000) + 20);
}

describe.each([
  {
    scenario: 'revocation-scaled',
    what: 'two gateways behind HAProxy with Redis, two replicas of each service',
    redis: true,
  },
  { scenario: 'revocation-single', what: 'one of each process, without Redis', redis: false },
])('revocation, $what', ({ scenario, what, redis: withRedis }) => {
  let system: RunningSystem;
  const figures: Record<string, unknown> = { what };
  const api = (path: string) => `${system.gatewayUrl}${path}`;
  const login = async (email: string): Promise<Pair> => {
    const res = await json(api('/api/auth/login'), {
      method: 'POST',
      body: JSON.stringify({ email, password: 'password-1' }),
    });
    expect(res.status).toBe(200);
    return res.body as unknown as Pair;
  };

  beforeAll(async () => {
    const f = await startFaultSystem(
      withRedis ? { gateways: 2, replicas: 2, redisUrl: redis.url } : { gateways: 1, replicas: 1 },
    );
    running.push(f);
    system = f.system;
  }, 180_000);
  afterAll(() => recordFigures(scenario, figures));

  it('when a session logs out with its access token, then every process refuses that token within 5 s, and the other session of the user goes on', async () => {
    const email = `revoked-${randomBytes(4).toString('hex')}@example.com`;
    const first = await json(api('/api/auth/register'), {
      method: 'POST',
      body: JSON.stringify({ email, password: 'password-1' }),
    });
    expect(first.status).toBe(201);
    const leaving = first.body as unknown as Pair;
    await nextSecond();
    const staying = await login(email);
    expect(Object.values(await statusesEverywhere(system, leaving.token)).every((s) => s < 400)).toBe(true);

    const out = await fetch(api('/api/auth/logout'), {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${leaving.token}` },
      body: JSON.stringify({ refreshToken: leaving.refreshToken }),
    });
    expect(out.status).toBe(204);
    const refusedAfter = await untilEverywhere(system, leaving.token, 401);
    figures.logoutRefusedAfterMs = refusedAfter;

    expect(Object.keys(refusedAfter).sort()).toEqual(
      everywhere(system)
        .map((t) => t.label)
        .sort(),
    );
    expect(Math.max(...Object.values(refusedAfter))).toBeLessThanOrEqual(BOUND_MS);
    const others = await statusesEverywhere(system, staying.token);
    expect(Object.entries(others).filter(([, s]) => s >= 400)).toEqual([]);
  }, 60_000);

  it('when a user logs out everywhere, then every process refuses each older token within 5 s, and a login right after works at once', async () => {
    const email = `everywhere-${randomBytes(4).toString('hex')}@example.com`;
    const registered = await json(api('/api/auth/register'), {
      method: 'POST',
      body: JSON.stringify({ email, password: 'password-1' }),
    });
    const old = registered.body as unknown as Pair;

    const out = await json(api('/api/auth/sessions'), { method: 'DELETE', token: old.token });
    expect(out.status).toBe(204);
    // Within the same second as the revocation, most of the time: its token must still work.
    const fresh = await login(email);
    const freshAtOnce = await statusesEverywhere(system, fresh.token);
    const refusedAfter = await untilEverywhere(system, old.token, 401);
    figures.everywhereRefusedAfterMs = refusedAfter;

    expect(Object.entries(freshAtOnce).filter(([, s]) => s >= 400)).toEqual([]);
    expect(Object.keys(refusedAfter).sort()).toEqual(
      everywhere(system)
        .map((t) => t.label)
        .sort(),
    );
    expect(Math.max(...Object.values(refusedAfter))).toBeLessThanOrEqual(BOUND_MS);
    const freshAfter = await statusesEverywhere(system, fresh.token);
    expect(Object.entries(freshAfter).filter(([, s]) => s >= 400)).toEqual([]);
  }, 60_000);
});
