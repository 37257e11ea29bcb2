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
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import {
  ensureTools,
  prepareBucket,
  REPO_ROOT,
  type RunningServer,
  type SystemOptions,
  startMongo,
  startRedis,
  startStorage,
  startSystem,
} from '@cs/devstack';
import { LIMITS_OFF } from './limits-off';
import { machineOf } from './machine';
import type { Report } from './report-json';
import { writeResults } from './results';
import { balancerHop } from './scale/balancer-hop';
import { estimate } from './scale/estimate';
import { groupsOf, type Target } from './scale/measured';
import { redisOnAuth } from './scale/redis-on-auth';
import { replicasScale } from './scale/replicas';
import { markdown } from './scale/report';
import { routesFor } from './scale/routes';
import { seedScaleData } from './scale/seed';
import { AUTH_LIMIT, C, DURATION_S, OUT, REPLICAS, ROUNDS, S3, SECRET, WARMUP_S } from './scale/settings';
import { round } from './stats';

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

    const routes = routesFor(await seedScaleData(one.url));

    // 1. One replica of each against two, each behind the balancer.
    const { scale, scaleRatios } = await replicasScale(one, two, routes, say);
    await stopOne(two.system);

    // 3. The balancer hop: the same single replicas with HAProxy in front and without.
    const direct = await system('direct', {});
    const hop = await balancerHop(one, direct, routes, say);
    await stopOne(one.system);

    // 4. Redis on the auth route: the limit counted in Redis against in the gateway's memory.
    const redis = await startRedis({ dataDir });
    owned.push(redis);
    const withRedis = await system('redis', { redisUrl: redis.url }, redis);
    const { limits, limiterCheck } = await redisOnAuth(direct, withRedis, redis, routes, say);
    await stopAll();

    const estimates = Object.fromEntries(
      (['read', 'write'] as const).map((route) => [route, estimate(scale[route]?.['1']?.cpuMsPerRequest ?? {})]),
    );
    const report = {
      when: new Date().toISOString(),
      durationS: round((Date.now() - started) / 1000),
      settings: { rounds: ROUNDS, durationS: DURATION_S, warmupS: WARMUP_S, connections: C, replicas: REPLICAS },
      machine: {
        ...machineOf(mongo.kind, storage.kind),
        loadAverageBefore: loadBefore.map((x) => round(x, 2)),
        loadAverageAfter: loadavg().map((x) => round(x, 2)),
      },
      scale: { routes: scale, ratios: scaleRatios, ratioOf: `median of the round-by-round ratios of ${REPLICAS} to 1` },
      estimate: estimates,
      balancerHop: hop,
      redisOnAuth: { ...limits, limiterCheck },
    };
    writeResults(OUT, 'scale', report, markdown);
  } finally {
    await stopAll();
    if (!process.env.KEEP_BENCH_DATA) rmSync(dataDir, { recursive: true, force: true });
  }
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
