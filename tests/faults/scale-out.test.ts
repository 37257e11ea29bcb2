/**
 * Scale-out: the system behind a real load balancer (HAProxy), with replicas of every process,
 * behaves as it does with one of each.
 *
 * 1. Rate limits hold across gateways: counted in one Redis, two gateways admit the auth limit
 *    once in all; counted in each gateway's memory, twice. A client's own X-Forwarded-For buys
 *    no fresh count.
 * 2. Losing a replica loses nothing: under mixed traffic, one replica of each service in turn and
 *    one gateway are SIGKILLed. Every request that fails must be a POST that was in flight at that
 *    replica when it died (the balancer sends every other method again, to another replica), and
 *    every write that got a 2xx reads back exactly.
 * 3. Redis goes away under load: auth answers a JSON 503 at once, everything else is served, and
 *    once Redis is back the limit counts again, with no restart.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { type ProcessName, REPO_ROOT, type RunningSystem, SERVICES, startRedis } from '@cs/devstack';
import { api, StreamReader } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { type OpName, type Outcome, SERVICE_OF, Traffic } from '../../bench/src/traffic';
import { type FaultSystem, OwnServer, recordFigures, sleep, startFaultSystem, until } from './harness';

const dataDir = join(REPO_ROOT, '.data', 'faults', `scale-${randomBytes(3).toString('hex')}`);
const running: FaultSystem[] = [];
let redis: OwnServer;

beforeAll(async () => {
  redis = await OwnServer.launch((port) => startRedis({ dataDir, port }));
});
afterAll(async () => {
  await Promise.all(running.map((f) => f.stop()));
  await redis?.stop();
});

async function scaledSystem(...args: Parameters<typeof startFaultSystem>): Promise<FaultSystem> {
  const f = await startFaultSystem(...args);
  running.push(f);
  return f;
}

/** One request through the balancer; its status, JSON body and how long it took. */
async function call(system: RunningSystem, path: string, init: RequestInit = {}) {
  const started = Date.now();
  const res = await fetch(`${system.gatewayUrl}${path}`, init);
  const text = await res.text();
  const json = (res.headers.get('content-type') ?? '').startsWith('application/json');
  return {
    status: res.status,
    body: json && text ? (JSON.parse(text) as Record<string, unknown>) : text,
    retryAfter: res.headers.get('retry-after'),
    ms: Date.now() - started,
  };
}

/** A login that the auth limit counts and identity refuses before any bcrypt: 400. */
const login = (system: RunningSystem, headers: Record<string, string> = {}) =>
  call(system, '/api/auth/login', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: '{}',
  });

const count = (statuses: number[], status: number) => statuses.filter((s) => s === status).length;

describe('rate limits across two gateways behind the balancer', () => {
  const LIMIT = 6;

  /**
   * 4 × LIMIT logins, one after the other, through the balancer to two gateways (which take
   * turns); what they answered, and how many requests each gateway served, recorded.
   */
  async function loginsThroughTwoGateways(scenario: string, redisUrl?: string) {
    const { system } = await scaledSystem({ gateways: 2, redisUrl, env: { AUTH_RATE_LIMIT: String(LIMIT) } });
    const statuses: number[] = [];
    for (let i = 0; i < 4 * LIMIT; i++) statuses.push((await login(system)).status);
    const served = (await system.balancer?.stats())?.gateway?.map((g) => g.requests) ?? [];
    recordFigures(scenario, {
      what: `${4 * LIMIT} logins through HAProxy to 2 gateways counting in ${redisUrl ? 'Redis' : 'memory'}, auth limit ${LIMIT}`,
      admitted: count(statuses, 400),
      refused: count(statuses, 429),
      requestsPerGateway: served.join(' '),
    });
    // Both gateways had their share: each could have admitted the whole limit on its own.
    expect(served.every((n) => n >= LIMIT)).toBe(true);
    return { system, statuses };
  }

  it('when each gateway counts in its own memory, then a client gets the auth limit once per gateway: twice in all', async () => {
    const { statuses } = await loginsThroughTwoGateways('scale-limits-in-memory');
    expect(count(statuses, 400)).toBe(2 * LIMIT);
    expect(count(statuses, 429)).toBe(2 * LIMIT);
  });

  it('when both count in one Redis, then exactly the auth limit is admitted in all, and a client-sent X-Forwarded-For buys no fresh count', async () => {
    const { system, statuses } = await loginsThroughTwoGateways('scale-limits-in-redis', redis.url);
    expect(statuses.slice(0, LIMIT)).toEqual(Array(LIMIT).fill(400));
    expect(count(statuses, 429)).toBe(3 * LIMIT);
    const spoofed = await login(system, { 'x-forwarded-for': '203.0.113.9' });
    expect(spoofed.status).toBe(429);
  });
});

/** Operations whose method is POST: the only ones the balancer does not send again. */
const POSTS: ReadonlySet<OpName> = new Set(['createPost', 'createNote', 'login', 'uploadUrl', 'attachNote']);

describe('losing a replica', () => {
  let f: FaultSystem;
  let traffic: Traffic;

  beforeAll(async () => {
    f = await scaledSystem({ replicas: 2, gateways: 2 });
    // Above the 13 s a write may wait for a turn whose holder was killed (README, One taker).
    traffic = new Traffic({ baseUrl: f.system.gatewayUrl, workers: 8, requestTimeoutMs: 20_000 });
    await traffic.prepare();
  }, 120_000);

  it('when a client is connected to either realtime replica, then it gets the events of writes made through either gateway, with the same ids', async () => {
    const { system } = f;
    const tag = `scale-${randomBytes(3).toString('hex')}`;
    const streams = await Promise.all(
      system.replicas.realtime.map((r) => StreamReader.open(`${r.url}/api/realtime?topics=posts&tag=${tag}`)),
    );
    try {
      const published: string[] = [];
      for (const gateway of system.replicas.gateway) {
        const http = api(gateway.url);
        const email = `scale-${randomBytes(4).toString('hex')}@example.com`;
        const { token } = (await http.post('/api/auth/register').send({ email, password: 'password-123' })).body;
        const auth = { Authorization: `Bearer ${token}` };
        const post = await http
          .post('/api/posts')
          .set(auth)
          .send({ title: 'Everywhere', body: 'Told to every replica.', tags: [tag] });
        await http.put(`/api/posts/${post.body._id}`).set(auth).send({ status: 'published' }).expect(200);
        published.push(post.body._id);
      }
      await Promise.all(streams.map((s) => s.waitFor(published.length, 10_000)));

      expect(system.replicas.realtime).toHaveLength(2);
      expect(system.replicas.gateway).toHaveLength(2);
      for (const stream of streams) {
        expect(stream.events.map((e) => [e.event, (e.data as { _id: string })._id])).toEqual(
          published.map((id) => ['posts.upsert', id]),
        );
      }
      expect(streams[0]?.events.map((e) => e.id)).toEqual(streams[1]?.events.map((e) => e.id));
    } finally {
      for (const stream of streams) stream.close();
    }
  });

  it('when one replica of each service in turn and one gateway are SIGKILLed under mixed traffic, then only POSTs in flight at the killed replica fail, and every 2xx write reads back', async () => {
    const { system } = f;
    traffic.start();
    await sleep(2000);
    const kills: {
      name: ProcessName;
      /** SIGKILL sent; the process seen gone. Until then its port still takes connections. */
      at: number;
      goneAt: number;
      backAt: number;
      /** What the balancer had sent to the killed replica when it was back in service. */
      servedBefore: number;
      inFlight: number;
      failed: number;
    }[] = [];

    for (const name of [...SERVICES, 'gateway'] as const) {
      const victim = system.replicas[name][0];
      if (!victim) throw new Error(`no ${name} replica`);
      const at = Date.now();
      process.kill(victim.child.pid, 'SIGKILL');
      await victim.child.exited;
      const goneAt = Date.now();
      // The other replica carries it all for a while, then the killed one comes back on its port.
      await sleep(3000);
      // Resolves once the balancer has it in service again.
      await system.start(name, 0);
      const servedBefore = (await system.balancer?.stats())?.[name]?.[0]?.requests ?? 0;
      kills.push({ name, at, goneAt, backAt: Date.now(), servedBefore, inFlight: 0, failed: 0 });
      await sleep(1500);
    }
    await traffic.stop();
    const verified = await traffic.verify();

    const failed = traffic.outcomes.filter((o: Outcome) => o.status === 0 || o.status >= 400);
    // Which kill a request was caught by: it started before the replica was gone, and was still
    // unanswered when the SIGKILL was sent. (A dying process's listening socket still completes
    // handshakes until the kernel closes it: a request sent then reached the replica, and died with it.)
    const caughtBy = (o: Outcome) =>
      kills.find(
        (k) =>
          (k.name === 'gateway' || SERVICE_OF[o.op] === k.name) &&
          o.startedAt <= k.goneAt &&
          o.startedAt + o.ms >= k.at,
      );
    for (const k of kills) {
      const caught = (o: Outcome) => caughtBy(o) === k;
      k.inFlight = traffic.outcomes.filter(caught).length;
      k.failed = failed.filter(caught).length;
    }
    /** For a failure no kill explains: when it started, against the kill before it. */
    const sinceKill = (o: Outcome) => {
      const last = kills.filter((k) => k.at <= o.startedAt).at(-1);
      return last ? `started ${o.startedAt - last.at} ms after ${last.name}-1 was killed` : 'before any kill';
    };
    const stats = await system.balancer?.stats();
    recordFigures('scale-replica-loss', {
      what: 'SIGKILL one of 2 replicas of identity, posts, notes, files, then one of 2 gateways, under 8 workers of mixed traffic through HAProxy; each killed replica started again after 3 s',
      traffic: Traffic.summarize(traffic.outcomes),
      kills: kills.map(({ name, inFlight, failed: lost, at, goneAt, backAt, servedBefore }) => ({
        killed: `${name}-1`,
        goneWithinMs: goneAt - at,
        requestsInFlightAtKill: inFlight,
        failedOfThose: lost,
        downForMs: backAt - at,
        servedAfterItsReturn: (stats?.[name]?.[0]?.requests ?? 0) - servedBefore,
      })),
      failedRequests: failed.map((o) => {
        const kill = caughtBy(o);
        return kill
          ? `${o.op} ${o.status || o.error}: in flight at ${kill.name}-1 when it was killed`
          : `${o.op} ${o.status || o.error}: ${sinceKill(o)}`;
      }),
      requestsPerReplica: Object.fromEntries(
        Object.entries(stats ?? {}).map(([k, v]) => [k, v.map((r) => r.requests).join(' ')]),
      ),
      writesVerified: verified.checked,
    });

    expect(traffic.outcomes.length).toBeGreaterThan(1000);
    expect(kills.reduce((n, k) => n + k.inFlight, 0)).toBeGreaterThan(0);
    // Every failure is a POST caught in flight by a kill. One caught at a service is the gateway's
    // JSON 502; one caught at a gateway, a kept-alive connection closed with no answer (the
    // balancer's rule, balancer.ts), which is what the killed gateway's own socket would have done.
    expect(failed.filter((o) => !POSTS.has(o.op) || caughtBy(o) === undefined)).toEqual([]);
    const answered = (o: Outcome) =>
      caughtBy(o)?.name === 'gateway' ? o.status === 0 && o.error === 'connection failed' : o.status === 502 && o.json;
    expect(failed.filter((o) => !answered(o))).toEqual([]);
    expect(verified.problems).toEqual([]);
    // Every replica is in service again, and the restarted ones were given work again.
    for (const replicas of Object.values(stats ?? {})) for (const r of replicas) expect(r.up).toBe(true);
    for (const k of kills) expect((stats?.[k.name]?.[0]?.requests ?? 0) - k.servedBefore).toBeGreaterThan(0);
  });
});

describe('Redis goes away under load', () => {
  const LIMIT = 40;

  it('when Redis is SIGKILLed, then auth answers a JSON 503 at once and reads are served, and once it is back the limit counts again without a restart', async () => {
    const { system } = await scaledSystem({
      gateways: 2,
      redisUrl: redis.url,
      // Reads are counted in Redis too, under a limit this load never reaches.
      env: { AUTH_RATE_LIMIT: String(LIMIT), RATE_LIMIT: '1000000' },
    });
    const reads: { status: number; at: number }[] = [];
    let reading = true;
    const readers = Array.from({ length: 4 }, async () => {
      while (reading) {
        const at = Date.now();
        reads.push({ status: (await call(system, '/api/posts')).status, at });
      }
    });

    await sleep(1000);
    const before = await login(system);
    const killedAt = Date.now();
    await redis.kill();
    await sleep(300);
    const during = await Promise.all(Array.from({ length: 6 }, () => login(system)));
    await sleep(2000);
    const duringLater = await login(system);
    await redis.restart();
    const restartedAt = Date.now();
    // Each gateway reconnects within a second or so; until then its auth answers are 503.
    const gateways = system.replicas.gateway.map((g) => g.url);
    const backInMs = await until(async () => {
      for (const url of gateways) {
        const res = await fetch(`${url}/api/auth/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{}',
        });
        await res.arrayBuffer();
        if (res.status === 503) return false;
      }
      return true;
    }, 10_000);
    await sleep(1000);
    reading = false;
    await Promise.all(readers);

    // Counting again, in the new Redis: what the probes above were admitted, then the rest of the limit.
    const keys = new Redis(redis.url);
    let admittedSoFar: number;
    try {
      admittedSoFar = Number(await keys.get('rl:auth:127.0.0.1'));
    } finally {
      keys.disconnect();
    }
    const after: number[] = [];
    for (let i = 0; i < LIMIT - admittedSoFar + 3; i++) after.push((await login(system)).status);

    const readsDuring = reads.filter((r) => r.at >= killedAt && r.at < restartedAt);
    recordFigures('scale-redis-loss', {
      what: `Redis SIGKILLed under 4 readers through HAProxy and 2 gateways, restarted ${restartedAt - killedAt} ms later; auth limit ${LIMIT}`,
      readsWhileRedisAway: readsDuring.length,
      readsNot200: reads.filter((r) => r.status !== 200).length,
      authWhileAway: during.map((r) => `${r.status} in ${r.ms} ms`).join(', '),
      countingAgainWithinMs: backInMs,
      afterBack: `${count(after, 400)} admitted, ${count(after, 429)} refused`,
    });

    expect(before.status).toBe(400);
    for (const answer of [...during, duringLater]) {
      expect(answer.status).toBe(503);
      expect(answer.body).toEqual({ error: 'Service temporarily unavailable' });
      expect(answer.retryAfter).toBe('1');
      expect(answer.ms).toBeLessThan(1000);
    }
    expect(readsDuring.length).toBeGreaterThan(50);
    expect(reads.filter((r) => r.status !== 200)).toEqual([]);
    expect(backInMs).toBeDefined();
    expect(admittedSoFar).toBeGreaterThanOrEqual(1);
    expect(after).toEqual([...Array(LIMIT - admittedSoFar).fill(400), 429, 429, 429]);
  });
});
