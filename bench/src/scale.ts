/**
 * `npm run bench:scale`: what the scaled topology (N replicas of every process behind HAProxy)
 * buys and costs on this machine, measured side by side in one run. Writes
 * bench/results/scale.{json,md}.
 *
 * 1. Throughput of the public read (`GET /api/posts`) and of an authenticated write
 *    (`POST /api/posts`, Bearer token) with 1 and with 2 replicas of every process (the four
 *    services and the gateway), both behind HAProxy, loaded in turn (A, B, B, A…), with the CPU
 *    time each process spent over each loaded window (/proc/<pid>/stat): which tier limits.
 * 2. From those, CPU-ms per request for each kind of process, and what N replicas on N machines
 *    would reach under a stated model (the report says which).
 * 3. The balancer hop: 1 replica each, with and without HAProxy, at fixed concurrency and one
 *    request at a time.
 * 4. Redis on the auth route: `POST /api/auth/login` with an empty body (a 400 from identity
 *    before any bcrypt, but counted by the gateway's auth limit first), with the limit counted
 *    in Redis and in the gateway's memory; the run checks that every request was counted.
 *
 * The systems share one database (FerretDB on PostgreSQL here) and one object store, as replicas
 * do in production; only one system is under load at a time.
 *
 * Knobs (environment): BENCH_ROUNDS (5), BENCH_DURATION_S (4), BENCH_WARMUP_S (5; 0 skips it),
 * BENCH_CONNECTIONS (16), BENCH_REPLICAS (2), BENCH_OUT (bench/results), MONGO_URL / S3_ENDPOINT.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import {
  ensureTools,
  type MongoServer,
  prepareBucket,
  REPO_ROOT,
  type RunningServer,
  type RunningSystem,
  type SystemOptions,
  startMongo,
  startRedis,
  startStorage,
  startSystem,
} from '@cs/devstack';
import { type CpuSnapshot, type CpuWindow, cpuBetween, cpuSnapshot, type ProcessGroups } from './cpu';
import { LIMITS_OFF } from './limits-off';
import type { LoadResult, LoadSpec } from './load';
import { interleave as interleaveRounds, type Variant } from './rounds';
import { median, pairedRatio, round } from './stats';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 4);
/** A new process runs slower until V8 has compiled its hot paths: each system is loaded first. */
const WARMUP_S = Number(process.env.BENCH_WARMUP_S ?? 5);
const C = Number(process.env.BENCH_CONNECTIONS ?? 16);
const REPLICAS = Number(process.env.BENCH_REPLICAS ?? 2);
const OUT = process.env.BENCH_OUT ?? join(REPO_ROOT, 'bench', 'results');
const NODE = process.execPath;
const DIST = join(REPO_ROOT, 'bench', 'dist', 'src');
const SECRET = `bench-secret-${'x'.repeat(40)}`;
const CORES = cpus().length;
const S3 = {
  accessKeyId: process.env.S3_ACCESS_KEY_ID ?? 'benchaccess',
  secretAccessKey: process.env.S3_SECRET_ACCESS_KEY ?? 'benchsecret-benchsecret',
  region: process.env.STORAGE_REGION ?? 'us-east-1',
  bucket: 'content-bench-scale',
};
/** Far above anything the run sends, so that no request is refused, yet every one is counted. */
const AUTH_LIMIT = 1_000_000_000;
const NODE_KINDS = ['gateway', 'identity', 'posts', 'notes', 'files'] as const;
/** The groups of the CPU tables, in order. */
const TIERS = ['gateway', 'posts', 'identity, notes, files', 'haproxy', 'redis', 'ferretdb', 'postgres'] as const;

// ---------- measuring ----------

/** A system under test and the processes whose CPU time its windows count. */
interface Target {
  url: string;
  system: RunningSystem;
  groups: ProcessGroups;
}

interface Measured extends LoadResult {
  window: CpuWindow;
  /** Requests the balancer sent to each replica of a kind during the window. */
  perReplica?: Record<string, number[]>;
}

/**
 * One load in a process of its own (load.js: autocannon; one-at-a-time.js), with a CPU snapshot
 * when it prints `started` and another when its summary arrives: the window is the load alone.
 */
function measured(target: Target, script: string, spec: Omit<LoadSpec, 'durationS'>, durationS = DURATION_S) {
  return new Promise<Measured>((resolve, reject) => {
    const child = spawn(NODE, [join(DIST, script), JSON.stringify({ ...spec, durationS })], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let before: CpuSnapshot | undefined;
    let after: CpuSnapshot | undefined;
    let statsBefore: Promise<Record<string, { requests: number }[]> | undefined> = Promise.resolve(undefined);
    let buffered = '';
    let result: LoadResult | undefined;
    child.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      let newline = buffered.indexOf('\n');
      while (newline !== -1) {
        const line = buffered.slice(0, newline).trim();
        buffered = buffered.slice(newline + 1);
        if (line === 'started') {
          before = cpuSnapshot(target.groups);
          statsBefore = target.system.balancer?.stats() ?? Promise.resolve(undefined);
        } else if (line.startsWith('{')) {
          after = cpuSnapshot(target.groups);
          result = JSON.parse(line) as LoadResult;
        }
        newline = buffered.indexOf('\n');
      }
    });
    child.on('exit', async (code) => {
      if (code !== 0 || !result || !before || !after) return reject(new Error(`${script} exited ${code}`));
      const window = cpuBetween(before, after);
      window.cpuMs['load generator'] = result.cpuMs ?? 0;
      const [then, now] = [await statsBefore, await target.system.balancer?.stats()];
      const perReplica =
        then && now
          ? Object.fromEntries(
              Object.entries(now).map(([kind, rs]) => [
                kind,
                rs.map((r, i) => r.requests - (then[kind]?.[i]?.requests ?? 0)),
              ]),
            )
          : undefined;
      resolve({ ...result, window, perReplica });
    });
  });
}

/** Runs the variants interleaved (rounds.ts). */
const interleave = (variants: Variant<Measured>[]) => interleaveRounds(variants, ROUNDS);

/** The CPU groups of a system: each kind of our processes, its balancer, the shared servers. */
function groupsOf(system: RunningSystem, mongo: MongoServer, redis?: RunningServer): ProcessGroups {
  const pids = (name: (typeof NODE_KINDS)[number]) => system.replicas[name].map((p) => p.child.pid);
  return {
    gateway: { pids: pids('gateway') },
    posts: { pids: pids('posts') },
    'identity, notes, files': { pids: [...pids('identity'), ...pids('notes'), ...pids('files')] },
    ...(system.balancer ? { haproxy: { pids: [system.balancer.child.pid] } } : {}),
    ...(redis?.child ? { redis: { pids: [redis.child.pid] } } : {}),
    ...(mongo.child ? { ferretdb: { pids: [mongo.child.pid] } } : {}),
    ...(mongo.postgres ? { postgres: { pids: [mongo.postgres.pid], tree: true } } : {}),
  };
}

/** What a variant's rounds come to: medians, failures, and CPU per group per request and in cores. */
function summary(rounds: Measured[]) {
  const groups = Object.keys(rounds[0]?.window.cpuMs ?? {});
  const med = (f: (m: Measured) => number, digits = 3) => round(median(rounds.map(f)), digits);
  const coresOf = (m: Measured, g: string) => (m.window.cpuMs[g] ?? 0) / m.window.windowMs;
  const oursCores = (m: Measured) => groups.reduce((n, g) => n + coresOf(m, g), 0);
  const perReplica = rounds[0]?.perReplica
    ? Object.fromEntries(
        Object.keys(rounds[0].perReplica).map((kind) => [
          kind,
          (rounds[0]?.perReplica?.[kind] ?? []).map((_, i) =>
            rounds.reduce((n, m) => n + (m.perReplica?.[kind]?.[i] ?? 0), 0),
          ),
        ]),
      )
    : undefined;
  return {
    rps: med((m) => m.rps, 1),
    p50: med((m) => m.p50),
    p99: med((m) => m.p99),
    ...(rounds[0] && 'meanMs' in rounds[0] ? { meanMs: med((m) => (m as { meanMs?: number }).meanMs ?? 0) } : {}),
    failures: rounds.reduce((n, m) => n + m.non2xx + m.errors + m.timeouts, 0),
    requests: rounds.reduce((n, m) => n + m.requests, 0),
    rounds: rounds.map((m) => Math.round(m.rps)),
    /** CPU-ms per request served, per group (median of the rounds). */
    cpuMsPerRequest: Object.fromEntries(
      groups.map((g) => [g, med((m) => (m.window.cpuMs[g] ?? 0) / Math.max(1, m.requests))]),
    ),
    /** Cores each group kept busy over the window (median of the rounds). */
    cores: Object.fromEntries(groups.map((g) => [g, med((m) => coresOf(m, g), 2)])),
    machineBusyCores: med((m) => m.window.machineBusyCores, 2),
    /** The machine's busy cores that none of the measured processes account for: anyone else's. */
    otherCores: med((m) => Math.max(0, m.window.machineBusyCores - oursCores(m)), 2),
    perReplica,
  };
}
type Summary = ReturnType<typeof summary>;

// ---------- the model ----------

/**
 * N machines, each running one replica of every kind; one balancer and one database (FerretDB +
 * PostgreSQL) shared by all, each with as many cores as this machine. Each replica is one Node
 * event loop, so it can use one core at most: a kind saturates at N × 1000 / (its CPU-ms per
 * request). The shared tiers cap the total at cores × 1000 / (their CPU-ms per request).
 */
function estimate(perRequest: Record<string, number>) {
  const costs = { gateway: perRequest.gateway ?? 0, posts: perRequest.posts ?? 0 };
  const [firstTier, firstCost] = Object.entries(costs).sort((a, b) => b[1] - a[1])[0] ?? ['gateway', 0];
  const perMachine = firstCost > 0 ? 1000 / firstCost : 0;
  const allNode = costs.gateway + costs.posts + (perRequest['identity, notes, files'] ?? 0);
  const dbCost = (perRequest.ferretdb ?? 0) + (perRequest.postgres ?? 0);
  const lbCost = perRequest.haproxy ?? 0;
  const ceilings: [string, number][] = [];
  if (dbCost > 0) ceilings.push(['database', (CORES * 1000) / dbCost]);
  if (lbCost > 0) ceilings.push(['balancer', (CORES * 1000) / lbCost]);
  const at = (n: number) => {
    let best: [string, number] = [`${firstTier} replicas`, n * perMachine];
    for (const c of ceilings) if (c[1] < best[1]) best = c;
    return { machines: n, rps: Math.round(best[1]), limitedBy: best[0] };
  };
  const dbCeiling = ceilings.find(([n]) => n === 'database')?.[1];
  return {
    firstTier,
    firstTierCpuMsPerRequest: round(firstCost, 3),
    perMachineRps: Math.round(perMachine),
    perOneCoreMachineRps: allNode > 0 ? Math.round(1000 / allNode) : 0,
    databaseCpuMsPerRequest: round(dbCost, 3),
    databaseCeilingRps: dbCeiling ? Math.round(dbCeiling) : undefined,
    balancerCpuMsPerRequest: round(lbCost, 3),
    balancerCeilingRps: lbCost > 0 ? Math.round((CORES * 1000) / lbCost) : undefined,
    machinesToDatabaseCeiling: dbCeiling && perMachine > 0 ? round(dbCeiling / perMachine, 1) : undefined,
    at: [1, 2, 4, 8, 16].map(at),
  };
}

// ---------- Redis, read directly ----------

/** One command to Redis over RESP, its reply as text (enough for KEYS and GET). */
function redisCommand(port: number, ...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let reply = '';
    socket.setTimeout(2000, () => socket.destroy(new Error('Redis did not answer')));
    socket.on('data', (chunk) => {
      reply += chunk.toString();
      // Every reply we ask for ends in CRLF once complete; a short wait covers multi-part arrays.
      setTimeout(() => socket.end(), 50);
    });
    socket.once('end', () => resolve(reply));
    socket.once('error', reject);
    socket.write(`*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`);
  });
}

/** How many auth-route requests the limiter has counted, from its `RateLimit` header (draft-7). */
async function countedByHeader(url: string): Promise<number> {
  const res = await fetch(`${url}/api/auth/login`, { method: 'POST' });
  await res.arrayBuffer();
  const header = res.headers.get('ratelimit') ?? '';
  const limit = Number(/limit=(\d+)/.exec(header)?.[1]);
  const remaining = Number(/remaining=(\d+)/.exec(header)?.[1]);
  if (res.status !== 400 || !Number.isFinite(limit - remaining))
    throw new Error(`login with an empty body: ${res.status}, RateLimit "${header}": the limiter is not on this path`);
  return limit - remaining;
}

// ---------- the run ----------

async function main(): Promise<void> {
  const started = Date.now();
  const loadBefore = loadavg();
  const dataDir = join(REPO_ROOT, '.data', `bench-scale-${process.pid}`);
  const owned: { stop(): Promise<unknown> }[] = [];
  const stopAll = async () => {
    for (const o of owned.reverse()) await o.stop().catch(() => undefined);
    owned.length = 0;
  };
  const stopOne = async (o: { stop(): Promise<unknown> }) => {
    owned.splice(owned.indexOf(o), 1);
    await o.stop();
  };
  process.once('SIGINT', () => void stopAll().then(() => process.exit(130)));
  const say = (s: string) => process.stdout.write(`bench:scale: ${s}\n`);

  try {
    if (!process.env.MONGO_URL || !process.env.S3_ENDPOINT) ensureTools();
    const [mongo, storage] = await Promise.all([startMongo({ dataDir }), startStorage({ dataDir, ...S3 })]);
    owned.push(mongo, storage);
    await prepareBucket({ endpoint: storage.url, ...S3, corsOrigins: [] });
    const base: SystemOptions = {
      dataDir,
      mongoUrl: mongo.url,
      storage: { endpoint: storage.url, ...S3 },
      jwtSecret: SECRET,
      // One set of databases for every system: replicas share their database.
      dbPrefix: `s${process.pid}_`,
      env: {
        LOG_LEVEL: 'warn',
        ...LIMITS_OFF,
        AUTH_RATE_LIMIT: String(AUTH_LIMIT),
        // Counts kept for the whole run, so that the check at the end sees every request.
        RATE_WINDOW: '1h',
      },
    };
    const system = async (name: string, options: Partial<SystemOptions>, redis?: RunningServer): Promise<Target> => {
      say(`starting ${name}`);
      const s = await startSystem({ ...base, ...options, dataDir: join(dataDir, name) });
      owned.push(s);
      return { url: s.gatewayUrl, system: s, groups: groupsOf(s, mongo, redis) };
    };
    const one = await system('one', { balanced: true });
    const two = await system('two', { replicas: REPLICAS, gateways: REPLICAS });

    // Data: a user and its token (bcrypt once, at the contract's cost), 30 published posts.
    const register = await fetch(`${one.url}/api/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: `scale-${process.pid}@example.com`, password: 'bench-password' }),
    });
    if (register.status !== 201) throw new Error(`register: ${register.status}`);
    const { token } = (await register.json()) as { token: string };
    const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    for (let i = 0; i < 30; i++) {
      const created = await fetch(`${one.url}/api/posts`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ title: `Scale post ${i}`, body: 'A body of a realistic length for a post. '.repeat(4) }),
      });
      const { _id } = (await created.json()) as { _id: string };
      const published = await fetch(`${one.url}/api/posts/${_id}`, {
        method: 'PUT',
        headers: auth,
        body: JSON.stringify({ status: 'published' }),
      });
      if (!published.ok) throw new Error(`publish: ${published.status}`);
    }

    const routes = {
      read: { path: '/api/posts', spec: {} },
      write: {
        path: '/api/posts',
        spec: {
          method: 'POST' as const,
          headers: auth,
          body: JSON.stringify({ title: 'Scale bench', body: 'A body long enough for the contract.' }),
        },
      },
      login: { path: '/api/auth/login', spec: { method: 'POST' as const, expect: 400 } },
    };
    type RouteName = keyof typeof routes;
    const at = (t: Target, route: RouteName, connections = C) => {
      const { path, spec } = routes[route];
      return connections === 1
        ? measured(t, 'one-at-a-time.js', { url: `${t.url}${path}`, connections, ...spec })
        : measured(t, 'load.js', { url: `${t.url}${path}`, connections, ...spec });
    };
    const warm = async (t: Target, ...names: RouteName[]) => {
      if (WARMUP_S <= 0) return;
      for (const name of names) {
        const { path, spec } = routes[name];
        await measured(t, 'load.js', { url: `${t.url}${path}`, connections: C, ...spec }, WARMUP_S);
      }
    };

    // 1. One replica of each against two, each behind the balancer.
    say('warming up');
    await warm(one, 'read', 'write');
    await warm(two, 'read', 'write');
    const scale: Record<string, Record<string, Summary>> = {};
    const scaleRatios: Record<string, number> = {};
    for (const route of ['read', 'write'] as const) {
      say(`1 and ${REPLICAS} replicas, ${route}`);
      const rounds = await interleave([
        { name: '1', run: () => at(one, route) },
        { name: String(REPLICAS), run: () => at(two, route) },
      ]);
      scale[route] = { '1': summary(rounds['1'] ?? []), [REPLICAS]: summary(rounds[String(REPLICAS)] ?? []) };
      scaleRatios[route] = pairedRatio(
        (rounds[String(REPLICAS)] ?? []).map((m) => m.rps),
        (rounds['1'] ?? []).map((m) => m.rps),
      );
    }
    await stopOne(two.system);

    // 3. The balancer hop: the same single replicas with HAProxy in front and without.
    const direct = await system('direct', {});
    await warm(direct, 'read', 'login');
    const hop: Record<string, Record<string, Summary>> = {};
    for (const connections of [C, 1]) {
      say(`balancer hop, ${connections} connection(s)`);
      const rounds = await interleave([
        { name: 'direct', run: () => at(direct, 'read', connections) },
        { name: 'balanced', run: () => at(one, 'read', connections) },
      ]);
      hop[connections] = { direct: summary(rounds.direct ?? []), balanced: summary(rounds.balanced ?? []) };
    }
    await stopOne(one.system);

    // 4. Redis on the auth route: the limit counted in Redis against in the gateway's memory.
    const redis = await startRedis({ dataDir });
    owned.push(redis);
    const withRedis = await system('redis', { redisUrl: redis.url }, redis);
    await warm(withRedis, 'login');
    const limits: Record<string, Record<string, Summary>> = {};
    const served = { memory: 0, redis: 0 };
    for (const connections of [C, 1]) {
      say(`rate limit in Redis, ${connections} connection(s)`);
      const rounds = await interleave([
        { name: 'memory', run: () => at(direct, 'login', connections) },
        { name: 'redis', run: () => at(withRedis, 'login', connections) },
      ]);
      limits[connections] = { memory: summary(rounds.memory ?? []), redis: summary(rounds.redis ?? []) };
      served.memory += limits[connections].memory?.requests ?? 0;
      served.redis += limits[connections].redis?.requests ?? 0;
    }
    // Every one of those requests passed the limiter: each was counted, by the store in use.
    const redisKeys = (await redisCommand(redis.port ?? 0, 'KEYS', 'rl:auth:*')).match(/rl:auth:[^\r\n]+/g) ?? [];
    let inRedis = 0;
    // A counter is a string: GET answers a bulk string, `$<length>\r\n<count>\r\n`.
    for (const key of redisKeys)
      inRedis += Number(/^\$\d+\r\n(\d+)\r\n/.exec(await redisCommand(redis.port ?? 0, 'GET', key))?.[1] ?? 0);
    const limiterCheck = {
      memory: { served: served.memory, counted: await countedByHeader(direct.url) },
      redis: { served: served.redis, counted: await countedByHeader(withRedis.url), inRedis, keys: redisKeys.length },
    };
    if (limiterCheck.memory.counted < served.memory || limiterCheck.redis.inRedis < served.redis)
      throw new Error(`the auth limit did not count every request: ${JSON.stringify(limiterCheck)}`);
    await stopAll();

    const estimates = Object.fromEntries(
      (['read', 'write'] as const).map((route) => [route, estimate(scale[route]?.['1']?.cpuMsPerRequest ?? {})]),
    );
    const report = {
      when: new Date().toISOString(),
      durationS: round((Date.now() - started) / 1000),
      settings: { rounds: ROUNDS, durationS: DURATION_S, warmupS: WARMUP_S, connections: C, replicas: REPLICAS },
      machine: {
        cores: CORES,
        cpu: cpus()[0]?.model,
        memoryGb: round(totalmem() / 2 ** 30),
        node: process.version,
        mongo: mongo.kind,
        storage: storage.kind,
        loadAverageBefore: loadBefore.map((x) => round(x, 2)),
        loadAverageAfter: loadavg().map((x) => round(x, 2)),
      },
      scale: { routes: scale, ratios: scaleRatios, ratioOf: `median of the round-by-round ratios of ${REPLICAS} to 1` },
      estimate: estimates,
      balancerHop: hop,
      redisOnAuth: { ...limits, limiterCheck },
    };
    mkdirSync(OUT, { recursive: true });
    writeFileSync(join(OUT, 'scale.json'), `${JSON.stringify(report, null, 2)}\n`);
    writeFileSync(join(OUT, 'scale.md'), markdown(report));
    process.stdout.write(markdown(report));
  } finally {
    await stopAll();
    if (!process.env.KEEP_BENCH_DATA) rmSync(dataDir, { recursive: true, force: true });
  }
}

// ---------- the report ----------

// biome-ignore lint/suspicious/noExplicitAny: the report is plain JSON built just above
type Report = Record<string, any>;

const ROUTE_NAMES: Record<string, string> = {
  read: '`GET /api/posts` (public list)',
  write: '`POST /api/posts` (Bearer token)',
};

function markdown(r: Report): string {
  const m = r.machine;
  const n = r.settings.replicas;
  const s = r.scale.routes;
  // autocannon's percentiles are whole milliseconds; one-at-a-time.js's, microseconds.
  const ms = (x: number) => (x >= 10 || Number.isInteger(x) ? x.toFixed(0) : x.toFixed(2));
  /** One row of a with/without table: each side's req/s and latencies, the ratio, the p50 added. */
  const pairRow = (label: string, without: Report, withIt: Report) =>
    `| ${label} | ${without.rps.toFixed(0)} req/s, p50 ${ms(without.p50)} ms, p99 ${ms(without.p99)} ms | ${withIt.rps.toFixed(0)} req/s, p50 ${ms(withIt.p50)} ms, p99 ${ms(withIt.p99)} ms | ${round(withIt.rps / without.rps, 3)} | ${round(withIt.p50 - without.p50, 3)} ms |`;
  const lines: string[] = [
    `# Scale-out benchmark ${r.when}`,
    '',
    `${m.cores} cores (${m.cpu}), ${m.memoryGb} GB, Node ${m.node}; MongoDB protocol: ${m.mongo}; S3: ${m.storage}. Load average before the run ${m.loadAverageBefore.join(', ')}, after ${m.loadAverageAfter.join(', ')}.`,
    '',
    ...shared(r),
    `Each figure is the median of ${r.settings.rounds} interleaved rounds of ${r.settings.durationS} s (the configurations loaded in turn, never together, the order flipped every round), after ${r.settings.warmupS} s of warm-up per route and system; ${r.settings.connections} connections unless said. Whole run ${r.durationS} s. Produced by \`npm run bench:scale\` (bench/src/scale.ts); the figures are in scale.json.`,
    '',
    '## Throughput at 1 and at 2 replicas of every process',
    '',
    `Every service and the gateway at 1 replica, then at ${n}, both behind HAProxy, on the same database. The ratio is the median of the round-by-round ratios.`,
    '',
    `| route | 1 replica each | ${n} replicas each | ratio | p50 / p99, 1 → ${n} | failed |`,
    '|---|---|---|---|---|---|',
    ...(['read', 'write'] as const).map((route) => {
      const [a, b] = [s[route]['1'], s[route][n]];
      return `| ${ROUTE_NAMES[route]} | ${a.rps.toFixed(0)} req/s | ${b.rps.toFixed(0)} req/s | **${r.scale.ratios[route]}** | ${a.p50} / ${a.p99} ms → ${b.p50} / ${b.p99} ms | ${a.failures + b.failures} |`;
    }),
    '',
    '### Where the CPU went, in cores busy over the loaded window',
    '',
    `/proc/<pid>/stat (utime + stime, and for PostgreSQL every backend) read when the load starts and when it ends; "others" is the machine's busy time (/proc/stat) that none of the listed processes account for: the idle system's health checks, the kernel, and other people's work on a shared machine. The machine has ${m.cores} cores.`,
    '',
    `| route, replicas | ${TIERS.filter((t) => t !== 'redis').join(' | ')} | load generator | others | machine |`,
    `|---|${TIERS.filter((t) => t !== 'redis')
      .map(() => '---')
      .join('|')}|---|---|---|`,
    ...(['read', 'write'] as const).flatMap((route) =>
      ['1', String(n)].map((k) => {
        const x = s[route][k];
        const cell = (g: string) => (x.cores[g] === undefined ? '–' : x.cores[g].toFixed(2));
        return `| ${route}, ${k} | ${TIERS.filter((t) => t !== 'redis')
          .map(cell)
          .join(
            ' | ',
          )} | ${cell('load generator')} | ${x.otherCores.toFixed(2)} | **${x.machineBusyCores.toFixed(2)}** |`;
      }),
    ),
    '',
    '### CPU-ms per request, per kind of process',
    '',
    "Each group's CPU time over the window divided by the requests served in it (a kind's replicas summed).",
    '',
    `| route, replicas | ${TIERS.filter((t) => t !== 'redis').join(' | ')} | total of the system | load generator |`,
    `|---|${TIERS.filter((t) => t !== 'redis')
      .map(() => '---')
      .join('|')}|---|---|`,
    ...(['read', 'write'] as const).flatMap((route) =>
      ['1', String(n)].map((k) => {
        const x = s[route][k].cpuMsPerRequest;
        const system = TIERS.reduce((sum, g) => sum + (x[g] ?? 0), 0);
        const cell = (g: string) => (x[g] === undefined ? '–' : x[g].toFixed(3));
        return `| ${route}, ${k} | ${TIERS.filter((t) => t !== 'redis')
          .map(cell)
          .join(' | ')} | **${system.toFixed(3)}** | ${cell('load generator')} |`;
      }),
    ),
    '',
    `Requests the balancer sent to each replica at ${n} (all rounds): ${(['read', 'write'] as const)
      .map(
        (route) =>
          `${route}: gateway ${(s[route][n].perReplica?.gateway ?? []).join(' / ')}, posts ${(s[route][n].perReplica?.posts ?? []).join(' / ')}`,
      )
      .join('; ')}.`,
    '',
    ...reading(r),
    '## What N replicas on N machines would reach: an estimate',
    '',
    "**Model.** N machines, each running one replica of every kind of process; one balancer and one database (FerretDB + PostgreSQL) shared by all, each of those on a machine with as many cores as this one. A replica is one Node event loop, so it uses one core at most: a kind saturates at N × 1000 / (its CPU-ms per request), and the first kind to saturate is the one with the highest cost. The balancer and the database cap the total at cores × 1000 / (their CPU-ms per request). **Assumptions:** the per-request CPU costs measured at 1 replica here hold on other machines (same CPU, a warm process, no extra cost from the network between machines); each machine has a core for each busy replica (gateway and posts); the database's cost per request stays the same as it gets busier (no lock or I/O contention, same data size); clients are elsewhere (the load generator's CPU is left out). FerretDB's CPU is not MongoDB's: on MongoDB the database ceiling would be another figure.",
    '',
    '| route | first tier to saturate | its CPU-ms/request | per machine | database CPU-ms/request → ceiling | balancer CPU-ms/request → ceiling | N = 1 | 2 | 4 | 8 | 16 | machines to reach the database ceiling |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...(['read', 'write'] as const).map((route) => {
      const e = r.estimate[route];
      const ceiling = (cost: number, rps?: number) => (rps ? `${cost} → ${rps} req/s` : 'not measured');
      return `| ${ROUTE_NAMES[route]} | ${e.firstTier} | ${e.firstTierCpuMsPerRequest} | ${e.perMachineRps} req/s | ${ceiling(e.databaseCpuMsPerRequest, e.databaseCeilingRps)} | ${ceiling(e.balancerCpuMsPerRequest, e.balancerCeilingRps)} | ${e.at.map((x: Report) => `${x.rps}${x.limitedBy === `${e.firstTier} replicas` ? '' : ` (${x.limitedBy})`}`).join(' | ')} | ${e.machinesToDatabaseCeiling ?? '–'} |`;
    }),
    '',
    `"Per machine" is 1000 / the first tier's cost; a machine with one core for all its replicas would reach ${(['read', 'write'] as const).map((route) => `${r.estimate[route].perOneCoreMachineRps} req/s (${route})`).join(' and ')} instead (1000 / the Node processes' costs summed).`,
    '',
    '## The balancer hop',
    '',
    'The same system shape, 1 replica of each kind, with HAProxy in front of every kind (`balanced: true`) and without: a request to the public list crosses the balancer twice (client → gateway, gateway → posts). At 1 connection the latencies come from a client of our own, timed to the microsecond, one request at a time over one keep-alive connection.',
    '',
    '| connections | without balancer | with balancer | ratio of req/s | p50 added |',
    '|---|---|---|---|---|',
    ...Object.keys(r.balancerHop)
      .sort((a, b) => Number(b) - Number(a))
      .map((k) => pairRow(k, r.balancerHop[k].direct, r.balancerHop[k].balanced)),
    '',
    (() => {
      const [fixed, single] = [r.balancerHop[String(r.settings.connections)], r.balancerHop['1']];
      return `One request at a time, the two crossings of HAProxy add ${round(single.balanced.p50 - single.direct.p50, 3)} ms at p50 (mean ${round(single.balanced.meanMs - single.direct.meanMs, 3)} ms). At ${r.settings.connections} connections the balanced system served ${round(fixed.balanced.rps / fixed.direct.rps, 3)} of the direct one's requests a second; HAProxy took ${fixed.balanced.cpuMsPerRequest.haproxy} CPU-ms per request (${fixed.balanced.cores.haproxy} cores) from the same ${r.machine.cores} cores as everything else, which on a machine of its own it would not.`;
    })(),
    '',
    '## Redis on the auth route',
    '',
    "`POST /api/auth/login` with an empty body, 1 replica of each kind, no balancer: the gateway's auth limit counts the request (in Redis, `REDIS_URL`, or in its own memory), then identity answers 400 before any bcrypt. The limit is set far above the run's requests, so nothing is refused.",
    '',
    '| connections | limit in memory | limit in Redis | ratio of req/s | p50 added |',
    '|---|---|---|---|---|',
    ...Object.keys(r.redisOnAuth)
      .filter((k) => /^\d+$/.test(k))
      .sort((a, b) => Number(b) - Number(a))
      .map((k) => pairRow(k, r.redisOnAuth[k].memory, r.redisOnAuth[k].redis)),
    '',
    (() => {
      const c = r.redisOnAuth.limiterCheck;
      const fixed = r.redisOnAuth[String(r.settings.connections)];
      const single = r.redisOnAuth['1'];
      return `One request at a time, counting in Redis (one round trip from the gateway per request) adds ${round(single.redis.p50 - single.memory.p50, 3)} ms at p50 (mean ${round(single.redis.meanMs - single.memory.meanMs, 3)} ms). Checked: every request passed the limiter. In memory it had counted ${c.memory.counted} requests (RateLimit header) for ${c.memory.served} measured; Redis held ${c.redis.inRedis} under ${c.redis.keys} key(s) for ${c.redis.served} measured (the rest are the warm-up's and the probes'). CPU per request at ${r.settings.connections} connections: gateway ${fixed.memory.cpuMsPerRequest.gateway} ms in memory, ${fixed.redis.cpuMsPerRequest.gateway} ms with Redis, plus Redis itself ${fixed.redis.cpuMsPerRequest.redis ?? '–'} ms.`;
    })(),
    '',
  ];
  return lines.join('\n');
}

/** A warning when the machine was not ours alone: its load before the run, others' CPU during it. */
function shared(r: Report): string[] {
  const others = (['read', 'write'] as const).flatMap((route) =>
    Object.values(r.scale.routes[route] as Record<string, Report>).map((x) => x.otherCores as number),
  );
  const most = Math.max(...others);
  if (r.machine.loadAverageBefore[0] < r.machine.cores / 2 && most < 0.2) return [];
  return [
    `> **The machine was shared during this run**: load average ${r.machine.loadAverageBefore[0]} at the start (${r.machine.cores} cores), and processes other than the measured ones kept up to ${most.toFixed(2)} cores busy during the loaded windows (the "others" column). Absolute figures are lower than on a quiet machine, and ratios noisier; each ratio still compares configurations loaded back to back.`,
    '',
  ];
}

/** The plain-language reading of the scale figures, from the figures themselves. */
function reading(r: Report): string[] {
  const n = r.settings.replicas;
  const cores = r.machine.cores;
  const out = ['### Reading', ''];
  for (const route of ['read', 'write'] as const) {
    const one = r.scale.routes[route]['1'];
    const two = r.scale.routes[route][n];
    const ratio = r.scale.ratios[route];
    const top = (x: Report) =>
      Object.entries(x.cores as Record<string, number>)
        .sort((a, b) => b[1] - a[1])
        .slice(0, 3)
        .map(([g, c]) => `${g} ${c.toFixed(2)}`)
        .join(', ');
    const saturated = (x: Report) => x.machineBusyCores >= 0.9 * cores;
    const gatewayOne = one.cores.gateway ?? 0;
    const why =
      saturated(one) && saturated(two)
        ? `the CPU: the machine was busy on ${one.machineBusyCores.toFixed(2)} and ${two.machineBusyCores.toFixed(2)} of its ${cores} cores, so the second replicas competed for the same cores as the first (the most: ${top(two)}; others' work ${two.otherCores.toFixed(2)})`
        : gatewayOne >= 0.85
          ? `at 1 replica, the gateway's event loop (${gatewayOne.toFixed(2)} of a core) while the machine was busy on ${one.machineBusyCores.toFixed(2)} of ${cores} cores; at ${n}, the machine on ${two.machineBusyCores.toFixed(2)}`
          : `neither the machine (busy on ${one.machineBusyCores.toFixed(2)} → ${two.machineBusyCores.toFixed(2)} of ${cores} cores) nor one event loop was full: the waits (database round trips) and the ${r.settings.connections} connections set the pace`;
    const db = (x: Report) => ((x.cores.ferretdb ?? 0) + (x.cores.postgres ?? 0)).toFixed(2);
    const systemCost = (x: Report) =>
      TIERS.reduce((sum, g) => sum + ((x.cpuMsPerRequest as Record<string, number>)[g] ?? 0), 0);
    const [costOne, costTwo] = [systemCost(one), systemCost(two)];
    out.push(
      `- **${route}**: ${one.rps.toFixed(0)} → ${two.rps.toFixed(0)} req/s (× ${ratio}). What limits it: ${why}. The database (FerretDB + PostgreSQL) took ${db(one)} → ${db(two)} cores; HAProxy ${(one.cores.haproxy ?? 0).toFixed(2)} → ${(two.cores.haproxy ?? 0).toFixed(2)}. The system's CPU per request went from ${costOne.toFixed(2)} to ${costTwo.toFixed(2)} ms (${costTwo >= costOne ? '+' : ''}${round((costTwo / costOne - 1) * 100, 0)}%): the price of twice the processes on the same cores (fewer requests per turn of each event loop, more switching between processes; not measured apart here). With the cores full, throughput follows the inverse: × ${round(costOne / costTwo, 2)} expected from the CPU alone, × ${ratio} measured.`,
    );
  }
  out.push(
    '',
    `On ${cores} cores, a second replica of every process cannot add CPU: it adds event loops, which helps only while one loop (not the machine) is the limit, and costs some context switching. The ratio on a machine with a core per replica is the estimate below, not this one.`,
    '',
  );
  return out;
}

/** `node scale.js --markdown`: scale.md written again from scale.json, after a change of wording. */
function rewriteMarkdown(): void {
  const report = JSON.parse(readFileSync(join(OUT, 'scale.json'), 'utf8')) as Report;
  writeFileSync(join(OUT, 'scale.md'), markdown(report));
}

if (process.argv[2] === '--markdown') rewriteMarkdown();
else
  void main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
