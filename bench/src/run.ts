/**
 * `npm run bench`: how close each hot path gets to its physical limit, as ratios against
 * baselines measured side by side in the same run (A, B, A, B…, median of the rounds), because
 * absolute numbers on a shared 2-core machine are noise. Writes bench/results/latest.{json,md}.
 *
 * Knobs (environment): BENCH_ROUNDS (5), BENCH_DURATION_S (4), BENCH_SOAK_S (60),
 * BENCH_SIZES (1000,10000), BENCH_VOLUMES (10000,50000), BENCH_MULTIPART_MB (1024), BENCH_MULTIPART_ROUNDS (3),
 * BENCH_OBSERVED_ROUNDS (7), BENCH_OBSERVED_WARMUP_S (15),
 * BENCH_OUT (bench/results), BENCH_BCRYPT_COST (12), MONGO_URL / S3_ENDPOINT,
 * BENCH_ATTACK_POSTS (10000), BENCH_ATTACK_S (25) (scenario 11, attacks.ts),
 * BENCH_REVOCATIONS (10000), BENCH_SESSIONS (1000) (scenario 12, sessions.ts),
 * BENCH_STREAMS (10000), BENCH_SUBSCRIBERS (1000), BENCH_DELIVERY_S (20) (scenario 13, realtime.ts),
 * BENCH_PB_POSTS (10000), BENCH_PB_STARTS (3) (scenario 14, pocketbase.ts),
 * BENCH_ONLY=attacks, sessions, realtime or pocketbase: scenario 11, 12, 13 or 14 alone, its report in
 * place of the whole run's; BENCH_ONLY=uploads: scenario 5 alone, every part in one process. Scenario 14 (ours beside PocketBase) runs only so: it starts the whole
 * system as `npm start` does, servers included.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type Child,
  ensureTools,
  freePort,
  httpOk,
  prepareBucket,
  REPO_ROOT,
  type RunningSystem,
  spawnChild,
  startJaeger,
  startMongo,
  startStorage,
  startSystem,
  waitFor,
  withDatabase,
} from '@cs/devstack';
import { markListingChanged } from '@cs/posts/operations';
import mongoose, { Types } from 'mongoose';
import { attackRows, attackSection } from './attacks/report';
import type { AttacksReport } from './attacks/report-types';
import { LIMITS_OFF } from './limits-off';
import type { LoadResult, LoadSpec } from './load';
import { pocketbaseRows, pocketbaseSection } from './pocketbase/report';
import type { PocketBaseReport } from './pocketbase/report-types';
import { type RealtimeReport, realtimeRows, runRealtime } from './realtime';
import {
  interleave as interleaveRounds,
  type LoadSummary,
  runScript,
  type ScenarioOptions,
  summarize,
  type Variant,
} from './rounds';
import { memoryOf, processTree, rssMb } from './rss';
import { runAttacks } from './scenarios/attacks';
import { runPocketBase } from './scenarios/pocketbase';
import { runSessions, type SessionsReport, sessionRows } from './sessions';
import { median, pairedRatio, percentile, round } from './stats';
import { measureUploadLinks, runUploadLinks, uploadLinkRows } from './upload-links';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 4);
const SOAK_S = Number(process.env.BENCH_SOAK_S ?? 60);
const SIZES = (process.env.BENCH_SIZES ?? '1000,10000').split(',').map(Number);
/** Scenario 10's sizes, after its near-empty measurement: how many posts are stored. */
const VOLUMES = (process.env.BENCH_VOLUMES ?? '10000,50000').split(',').map(Number);
/** How often scenario 10's writer changes a published post while the list is read. */
const CHANGE_EVERY_MS = 1000;
/** The file of the multipart scenario, and its rounds (each round sends it twice). */
const MULTIPART_MB = Number(process.env.BENCH_MULTIPART_MB ?? 1024);
const MULTIPART_ROUNDS = Number(process.env.BENCH_MULTIPART_ROUNDS ?? 3);
/** The observability goals are within 3%: more rounds for their medians. */
const OBSERVED_ROUNDS = Number(process.env.BENCH_OBSERVED_ROUNDS ?? 7);
/**
 * Each of its systems' warm-up, per read. A process's CPU per request kept falling for about 20 s
 * of its own load (notes: 830 → 490 µs a request), so a shorter one measured how warm a system
 * was, not what it was doing.
 */
const OBSERVED_WARMUP_S = Number(process.env.BENCH_OBSERVED_WARMUP_S ?? 15);
/** The files service's default part size (MULTIPART_PART_SIZE), and the web client's concurrency. */
const PART_SIZE = 8 * 1024 * 1024;
const PART_CONCURRENCY = 4;
/** The contract's cost; the smoke test lowers it, or half a second of load would see no login. */
const BCRYPT_COST = process.env.BENCH_BCRYPT_COST ?? '12';
const OUT = process.env.BENCH_OUT ?? join(REPO_ROOT, 'bench', 'results');
/** Scenario 2's baseline, as the report states it (it changed in issue 32). */
const AUTH_BASELINE =
  'the same read without a token, through the same gateway and posts service (since issue 32; before, GET /api/posts/my-posts against builds with verification swapped for a decode)';
/** The scenarios that can run alone; unset: every scenario. */
const ONLY = process.env.BENCH_ONLY ?? '';
if (ONLY && !['attacks', 'sessions', 'realtime', 'pocketbase', 'uploads'].includes(ONLY)) {
  throw new Error(`BENCH_ONLY=${ONLY}: only "attacks", "sessions", "realtime", "pocketbase" or "uploads" runs alone`);
}
/** Scenario 14: the posts on each system, and the restarts of each for the time to ready. */
const PB_POSTS = Number(process.env.BENCH_PB_POSTS ?? 10_000);
const PB_STARTS = Number(process.env.BENCH_PB_STARTS ?? 3);
const NODE = process.execPath;
const DIST = join(REPO_ROOT, 'bench', 'dist', 'src');
const SECRET = `bench-secret-${'x'.repeat(40)}`;
/** Our own versitygw's credentials, or those of the S3 server named by S3_ENDPOINT. */
const S3 = {
  accessKeyId: process.env.S3_ACCESS_KEY_ID ?? 'benchaccess',
  secretAccessKey: process.env.S3_SECRET_ACCESS_KEY ?? 'benchsecret-benchsecret',
  region: process.env.STORAGE_REGION ?? 'us-east-1',
  bucket: 'content-bench',
};

// ---------- measuring ----------

const runChild = (script: string, args: string[]) => runScript(NODE, DIST, script, args);

const load = (spec: Omit<LoadSpec, 'durationS'>, durationS = DURATION_S) =>
  runChild('load.js', [JSON.stringify({ ...spec, durationS })]);

/** Runs the variants interleaved (rounds.ts): the medians of each one's rounds. */
async function interleave(variants: Variant<LoadResult>[], roundCount = ROUNDS): Promise<Record<string, LoadSummary>> {
  const rounds = await interleaveRounds(variants, roundCount);
  return Object.fromEntries(Object.entries(rounds).map(([name, rs]) => [name, summarize(rs)]));
}

// ---------- the run ----------

async function main(): Promise<void> {
  const started = Date.now();
  const dataDir = join(REPO_ROOT, '.data', `bench-${process.pid}`);
  const owned: { stop(): Promise<unknown> }[] = [];
  const stopAll = async () => {
    for (const o of owned.reverse()) await o.stop().catch(() => undefined);
  };
  // Stopped by Ctrl-C or by its pid (kill's SIGTERM), it stops what it started first.
  process.once('SIGINT', () => void stopAll().then(() => process.exit(130)));
  process.once('SIGTERM', () => void stopAll().then(() => process.exit(143)));

  try {
    if (ONLY === 'pocketbase') {
      // 14. Ours beside PocketBase: each starts everything it needs, so no shared servers here.
      process.stdout.write('bench: 14 PocketBase, alone (BENCH_ONLY)…\n');
      const pocketbase = await runPocketBase({
        dataDir: join(dataDir, 'pocketbase'),
        dist: DIST,
        node: NODE,
        rounds: ROUNDS,
        durationS: DURATION_S,
        connections: 10,
        posts: PB_POSTS,
        starts: PB_STARTS,
        bcryptCost: BCRYPT_COST,
        own: (stoppable) => owned.push(stoppable),
        log: (line) => process.stdout.write(`${line}\n`),
      });
      writeReport({
        when: new Date().toISOString(),
        durationS: round((Date.now() - started) / 1000),
        only: ONLY,
        settings: { rounds: ROUNDS, durationS: DURATION_S },
        machine: {
          cores: cpus().length,
          cpu: cpus()[0]?.model,
          memoryGb: round(totalmem() / 2 ** 30),
          node: process.version,
          mongo: pocketbase.servers.mongo,
          storage: pocketbase.servers.storage,
        },
        scenarios: { pocketbase },
      });
      return;
    }
    if (!process.env.MONGO_URL || !process.env.S3_ENDPOINT) ensureTools();
    const [mongo, storage] = await Promise.all([startMongo({ dataDir }), startStorage({ dataDir, ...S3 })]);
    owned.push(mongo, storage);
    await prepareBucket({ endpoint: storage?.url ?? '', ...S3, corsOrigins: [] });

    // 11. Attacks beside a bystander, on a system of their own with the gateway's limits on.
    const attacksScenario = () =>
      runAttacks({
        dataDir: join(dataDir, 'attacks'),
        mongoUrl: mongo?.url ?? '',
        storage: { endpoint: storage?.url ?? '', ...S3 },
        jwtSecret: SECRET,
        dbPrefix: `b${process.pid}_a_`,
        bcryptCost: BCRYPT_COST,
        dist: DIST,
        node: NODE,
        own: (system) => owned.push(system),
        log: (line) => process.stdout.write(`${line}\n`),
      });
    /** What scenarios 12 and 13, each on systems of its own, share. */
    const onItsOwnSystem = (name: string): Omit<ScenarioOptions, 'dbPrefix'> => ({
      dataDir: join(dataDir, name),
      mongoUrl: mongo?.url ?? '',
      storage: { endpoint: storage?.url ?? '', ...S3 },
      jwtSecret: SECRET,
      dist: DIST,
      node: NODE,
      rounds: ROUNDS,
      durationS: DURATION_S,
      connections: 10,
      own: (system) => owned.push(system),
      log: (line) => process.stdout.write(`${line}\n`),
    });
    // 12. Sessions: refresh against create, and reads with a revocation list against none.
    const sessionsScenario = () => runSessions({ ...onItsOwnSystem('sessions'), dbPrefix: `b${process.pid}_s` });
    // 13. Live updates: idle streams, delivery, and reads and writes beside open streams.
    const realtimeScenario = () => runRealtime({ ...onItsOwnSystem('realtime'), dbPrefix: `b${process.pid}_r` });
    const machine = {
      cores: cpus().length,
      cpu: cpus()[0]?.model,
      memoryGb: round(totalmem() / 2 ** 30),
      node: process.version,
      mongo: mongo?.kind,
      storage: storage?.kind,
      note: mongo.kind.startsWith('FerretDB')
        ? 'FerretDB sends down only equality filters (PostgreSQL) or only _id (SQLite), never sort, skip or limit: database figures are not MongoDB figures.'
        : undefined,
    };
    // A scenario alone (BENCH_ONLY): what it says as it starts, and its figures under their key.
    const alone: Record<string, { what: string; key: string; run: () => Promise<unknown> }> = {
      attacks: { what: '11 attacks beside a bystander', key: 'attacks', run: attacksScenario },
      sessions: { what: '12 sessions', key: 'sessions', run: sessionsScenario },
      realtime: { what: '13 realtime', key: 'realtime', run: realtimeScenario },
      uploads: {
        what: '5 upload links, every part in one process,',
        key: 'uploadsOneProcess',
        run: () => runUploadLinks({ ...onItsOwnSystem('uploads'), dbPrefix: `b${process.pid}_u` }),
      },
    };
    const only = alone[ONLY];
    if (only) {
      process.stdout.write(`bench: ${only.what} alone (BENCH_ONLY)…\n`);
      const figures = await only.run();
      writeReport({
        when: new Date().toISOString(),
        durationS: round((Date.now() - started) / 1000),
        only: ONLY,
        settings: { rounds: ROUNDS, durationS: DURATION_S },
        machine,
        scenarios: { [only.key]: figures },
      });
      return;
    }

    const system: RunningSystem = await startSystem({
      dataDir,
      mongoUrl: mongo?.url ?? '',
      storage: { endpoint: storage?.url ?? '', ...S3 },
      jwtSecret: SECRET,
      dbPrefix: `b${process.pid}_`,
      // One process per part: scenario 1 puts a bare proxy in front of posts' own process, and
      // these scenarios' history is of that mode (scenario 14 measures npm start's).
      oneProcess: false,
      env: {
        LOG_LEVEL: 'warn',
        ...LIMITS_OFF,
        BCRYPT_COST: BCRYPT_COST,
      },
    });
    owned.push(system);
    const gw = system.gatewayUrl;
    const postsUrl = system.processes.posts.url;
    const postsDb = withDatabase(mongo?.url ?? '', `b${process.pid}_posts`);

    // The baseline process of scenario 1: the bare proxy.
    const proxyPort = await freePort();
    const logFile = (name: string) => join(dataDir, 'logs', `${name}.log`);
    const bare = spawnChild({
      name: 'bare-proxy',
      command: NODE,
      args: [join(DIST, 'bare-proxy.js'), String(proxyPort), postsUrl],
      logFile: logFile('bare-proxy'),
    });
    owned.push(bare);
    const bareUrl = `http://127.0.0.1:${proxyPort}`;
    await waitFor('bare proxy', () => httpOk(`${bareUrl}/healthz`), { child: bare });

    // Data: a user, one published post to read, their own posts for my-posts.
    const email = `bench-${process.pid}@example.com`;
    const register = await fetch(`${gw}/api/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: 'bench-password' }),
    });
    const token = ((await register.json()) as { token: string }).token;
    const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const userId = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()).id as string;
    const db = await mongoose.createConnection(postsDb).asPromise();
    const posts = db.collection('posts');
    const PostModel = db.model('Post', new mongoose.Schema({}, { strict: false, collection: 'posts' }));
    const now = Date.now();
    const doc = (i: number, extra: Record<string, unknown> = {}) => ({
      _id: new Types.ObjectId(),
      title: `Bench post ${i}`,
      body: 'A body of a realistic length for a short post in the list. '.repeat(3),
      authorId: new Types.ObjectId(userId),
      status: 'published',
      tags: ['bench'],
      publishedAt: new Date(now - i * 1000),
      createdAt: new Date(now - i * 1000),
      updatedAt: new Date(now - i * 1000),
      ...extra,
    });
    const readPost = doc(0);
    await posts.insertMany([readPost, ...Array.from({ length: 20 }, (_, i) => doc(i + 1, { tags: ['mine'] }))]);
    const postPath = `/api/posts/${readPost._id.toHexString()}`;

    const processes: Record<string, Child> = Object.fromEntries(
      Object.values(system.processes).map((p) => [p.name, p.child]),
    );
    const memory: Record<string, Record<string, { before: number; after: number }>> = {};
    const scenario = async <T>(name: string, body: () => Promise<T>): Promise<T> => {
      const before = Object.fromEntries(Object.entries(processes).map(([n, c]) => [n, rssMb(c.pid)]));
      process.stdout.write(`bench: ${name}…\n`);
      const result = await body();
      memory[name] = Object.fromEntries(
        Object.entries(processes).map(([n, c]) => [n, { before: before[n] ?? 0, after: rssMb(c.pid) }]),
      );
      return result;
    };
    const C = 10;

    // Memory per process: ours, FerretDB, and PostgreSQL with its backends. RSS counts the pages
    // a process shares (Node's own code, in each of ours) in full; PSS counts its share of them.
    const memorySnapshot = () => {
      const ours = Object.fromEntries(Object.values(system.processes).map((p) => [p.name, memoryOf([p.child.pid])]));
      const pids = Object.values(system.processes).map((p) => p.child.pid);
      return {
        ...ours,
        'ours together': memoryOf(pids),
        ...(mongo.child ? { ferretdb: memoryOf([mongo.child.pid]) } : {}),
        ...(mongo.postgres ? { postgres: memoryOf(processTree(mongo.postgres.pid)) } : {}),
      };
    };
    await sleep(3000);
    const idleMemory = memorySnapshot();

    // 10. The embedded default at volume: a post by id and the public list by tag through the
    // gateway, 10 clients, with N posts stored (a tenth of them tagged "listed"). The list is
    // read with its pages kept, then while a writer changes a published post every second (each
    // change makes every kept page be computed again), and one request is timed right after a
    // change: what a page costs to compute.
    let stored = await posts.estimatedDocumentCount();
    const otherAuthor = new Types.ObjectId();
    let changes = 0;
    const changeListing = async () => {
      changes += 1;
      const res = await fetch(`${gw}${postPath}`, {
        method: 'PUT',
        headers: auth,
        body: JSON.stringify({ title: `Bench post, change ${changes}` }),
      });
      if (!res.ok) throw new Error(`PUT ${postPath}: ${res.status}`);
    };
    // Posts written around the service: its kept listing is told, as any such write must.
    const listingChanged = () => markListingChanged(db);
    const atVolume = async (size: number) => {
      while (stored < size) {
        const first = stored;
        const n = Math.min(1000, size - first);
        await posts.insertMany(
          Array.from({ length: n }, (_, i) =>
            doc(first + i + 100_000, { authorId: otherAuthor, tags: (first + i) % 10 === 0 ? ['listed'] : ['other'] }),
          ),
        );
        stored += n;
      }
      await listingChanged();
      const list = `${gw}/api/posts?tag=listed&limit=20`;
      const byId = await load({ url: `${gw}${postPath}`, connections: C }, 2 * DURATION_S);
      const kept = await load({ url: list, connections: C }, 2 * DURATION_S);
      let writing = true;
      const writer = (async () => {
        let made = 0;
        while (writing) {
          await changeListing();
          made += 1;
          await sleep(CHANGE_EVERY_MS);
        }
        return made;
      })();
      const changing = await load({ url: list, connections: C }, 2 * DURATION_S);
      writing = false;
      const made = await writer;
      const computeMs: number[] = [];
      for (let i = 0; i < 5; i++) {
        await changeListing();
        const t = process.hrtime.bigint();
        const res = await fetch(list);
        await res.arrayBuffer();
        if (!res.ok) throw new Error(`GET ${list}: ${res.status}`);
        computeMs.push(Number(process.hrtime.bigint() - t) / 1e6);
      }
      return {
        posts: stored,
        byId,
        listKept: kept,
        listChanging: { ...changing, changes: made },
        firstAfterChangeMs: round(median(computeMs), 1),
      };
    };
    const volumes = [await scenario('10 embedded default, near-empty', () => atVolume(0))];

    // 1. The gateway hop.
    const hop = await scenario('1 gateway hop', () =>
      interleave([
        { name: 'gateway', run: () => load({ url: `${gw}${postPath}`, connections: C }) },
        { name: 'direct', run: () => load({ url: `${postsUrl}${postPath}`, connections: C }) },
        { name: 'bare proxy', run: () => load({ url: `${bareUrl}${postPath}`, connections: C }) },
      ]),
    );

    // 2. Authentication cost: one read of the same published post through the same gateway and
    // posts service, with a token (verified by both, as every authenticated request is) and
    // without one (nothing to verify). The product has no switch that skips verification, so the
    // baseline is the route's anonymous form rather than a build with verification swapped for a
    // decode (the baseline before issue 32, on GET /api/posts/my-posts): its ratio also counts
    // reading the token, so it is the stricter of the two.
    const authCost = await scenario('2 authentication cost', () =>
      interleave([
        { name: 'verified', run: () => load({ url: `${gw}${postPath}`, headers: auth, connections: C }) },
        { name: 'unverified', run: () => load({ url: `${gw}${postPath}`, connections: C }) },
      ]),
    );

    // 3. Login against the bcrypt ceiling (4 at a time: the libuv pool's size).
    const loginBody = JSON.stringify({ email, password: 'bench-password' });
    const login = await scenario('3 login vs bcrypt', () =>
      interleave([
        {
          name: 'login',
          run: () =>
            load({
              url: `${gw}/api/auth/login`,
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: loginBody,
              connections: 4,
            }),
        },
        { name: 'bcrypt.compare', run: () => runChild('bcrypt-ceiling.js', ['4', String(DURATION_S), BCRYPT_COST]) },
      ]),
    );

    // 4. The public list at two sizes: total latency (1 connection) against the query alone.
    const list: Record<string, unknown>[] = [];
    await scenario('4 public list', async () => {
      let seeded = 0;
      for (const size of SIZES) {
        const batch = Array.from({ length: size - seeded }, (_, i) =>
          doc(seeded + i + 100, { tags: i % 10 === 0 ? ['listed'] : ['other'] }),
        );
        for (let i = 0; i < batch.length; i += 1000) await posts.insertMany(batch.slice(i, i + 1000));
        seeded = size;
        await listingChanged();
        // The query alone, through mongoose with the service's filter, sort and limit, one at a
        // time, interleaved with the HTTP rounds so both see the same machine.
        const filter = { status: 'published', tags: 'listed' };
        const queryOnly = async (): Promise<LoadResult> => {
          const times: number[] = [];
          const deadline = Date.now() + DURATION_S * 1000;
          while (Date.now() < deadline) {
            const t = process.hrtime.bigint();
            await Promise.all([
              PostModel.countDocuments(filter),
              PostModel.find(filter).sort({ createdAt: -1, _id: -1 }).limit(20).lean(),
            ]);
            times.push(Number(process.hrtime.bigint() - t) / 1e6);
          }
          return {
            requests: times.length,
            rps: times.length / DURATION_S,
            p50: median(times),
            p99: 0,
            non2xx: 0,
            errors: 0,
            timeouts: 0,
          };
        };
        // The same request, one at a time, split by the service's own Server-Timing header:
        // overhead = the request's time in the service (app) minus its database part (db), and
        // as the client saw it (whole round trip minus db). Exact per request, whatever the db.
        const splits: { inService: number[]; roundTrip: number[] } = { inService: [], roundTrip: [] };
        const split = async (): Promise<LoadResult> => {
          const deadline = Date.now() + DURATION_S * 1000;
          let n = 0;
          while (Date.now() < deadline) {
            const t = process.hrtime.bigint();
            const res = await fetch(`${postsUrl}/api/posts?tag=listed&limit=20`);
            await res.arrayBuffer();
            const total = Number(process.hrtime.bigint() - t) / 1e6;
            const timing = res.headers.get('server-timing') ?? '';
            const db = Number(/db;dur=([\d.]+)/.exec(timing)?.[1]);
            const app = Number(/app;dur=([\d.]+)/.exec(timing)?.[1]);
            splits.inService.push(app - db);
            splits.roundTrip.push(total - db);
            n += 1;
          }
          return { requests: n, rps: n / DURATION_S, p50: 0, p99: 0, non2xx: 0, errors: 0, timeouts: 0 };
        };
        const http = await interleave([
          { name: 'service', run: () => load({ url: `${postsUrl}/api/posts?tag=listed&limit=20`, connections: 1 }) },
          { name: 'gateway', run: () => load({ url: `${gw}/api/posts?tag=listed&limit=20`, connections: 1 }) },
          { name: 'query', run: queryOnly },
          { name: 'split', run: split },
        ]);
        const dbP50 = http.query?.p50 ?? 0;
        // autocannon's percentiles are whole milliseconds; with one connection the mean latency
        // (1000 / rps) is finer, so both are reported. The overhead is the Server-Timing split:
        // the service answers from its kept page, so subtracting the query's time says nothing.
        const mean = (rps = 0) => round(1000 / Math.max(rps, 1e-9), 2);
        list.push({
          posts: size,
          dbQueryP50Ms: round(dbP50, 2),
          dbQueryMeanMs: mean(http.query?.rps),
          serviceP50Ms: http.service?.p50,
          serviceMeanMs: mean(http.service?.rps),
          gatewayP50Ms: http.gateway?.p50,
          gatewayMeanMs: mean(http.gateway?.rps),
          overheadInServiceP50Ms: round(median(splits.inService), 2),
          overheadRoundTripP50Ms: round(median(splits.roundTrip), 2),
          overheadRoundTripP99Ms: round(percentile(splits.roundTrip, 0.99), 2),
        });
      }
    });

    for (const size of VOLUMES)
      volumes.push(await scenario(`10 embedded default, ${size} posts`, () => atVolume(size)));

    // 5. Issuing an upload link, both kinds, through the gateway (upload-links.ts).
    const uploads = await scenario('5 upload links', () =>
      measureUploadLinks({
        gw,
        token,
        secret: SECRET,
        postPath,
        connections: C,
        rounds: ROUNDS,
        load: (spec) => load(spec),
      }),
    );

    // 8. A large file in parts through our signed links, against the SDK's own multipart upload.
    const multipartSettings = {
      sizeMb: MULTIPART_MB,
      partSize: PART_SIZE,
      concurrency: PART_CONCURRENCY,
      gateway: gw,
      token,
      endpoint: storage?.url,
      ...S3,
    };
    const multipart = await scenario('8 multipart throughput', () =>
      interleave(
        (['ours', 'sdk'] as const).map((mode) => ({
          name: mode,
          run: () => runChild('multipart-upload.js', [JSON.stringify({ ...multipartSettings, mode })]),
        })),
        MULTIPART_ROUNDS,
      ),
    );

    // 7. The 304 path against the full read of scenario 1.
    const etag = (await fetch(`${gw}${postPath}`)).headers.get('etag') ?? '';
    const cached = await scenario('7 304 not modified', () =>
      interleave([
        {
          name: '304',
          run: () => load({ url: `${gw}${postPath}`, headers: { 'if-none-match': etag }, connections: C, expect: 304 }),
        },
        { name: '200', run: () => load({ url: `${gw}${postPath}`, connections: C }) },
      ]),
    );

    // 9. What observability costs: the gateway hop and an authenticated read (a caller's notes:
    // token verified twice, a query on a small collection) on three more systems beside the first,
    // on the same databases: metrics on (served on their own ports); tracing on, sampling a tenth
    // of the traces as production would (parentbased_traceidratio 0.1); tracing on, every span.
    // Both exporting over OTLP to one real Jaeger, on the same two cores.
    const observed = await scenario('9 observability cost', async () => {
      const jaeger = await startJaeger({ dataDir });
      owned.push(jaeger);
      const variant = (name: string, env: Record<string, string>, metrics: boolean) =>
        startSystem({
          dataDir: join(dataDir, name),
          mongoUrl: mongo?.url ?? '',
          storage: { endpoint: storage?.url ?? '', ...S3 },
          jwtSecret: SECRET,
          dbPrefix: `b${process.pid}_`,
          metrics,
          env: {
            LOG_LEVEL: 'warn',
            ...LIMITS_OFF,
            BCRYPT_COST: BCRYPT_COST,
            ...env,
          },
        });
      const tracing = { OTEL_EXPORTER_OTLP_ENDPOINT: jaeger.otlpUrl };
      const systems: Record<string, string> = { off: gw };
      for (const [name, env, metrics] of [
        ['metrics', {}, true],
        [
          'tracing, 10% sampled',
          { ...tracing, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' },
          false,
        ],
        ['tracing, every span', tracing, false],
      ] as const) {
        const started = await variant(name.replace(/\W+/g, '-'), env, metrics);
        owned.push(started);
        systems[name] = started.gatewayUrl;
      }
      const reads = { hop: { path: postPath, headers: {} }, authenticated: { path: '/api/notes', headers: auth } };
      // A new process runs slower until V8 has compiled its hot paths: warm each up first.
      for (const url of Object.values(systems)) {
        for (const { path, headers } of Object.values(reads))
          await load({ url: `${url}${path}`, headers, connections: C }, OBSERVED_WARMUP_S);
      }
      const measure = ({ path, headers }: { path: string; headers: Record<string, string> }) =>
        interleave(
          Object.entries(systems).map(([name, url]) => ({
            name,
            run: () => load({ url: `${url}${path}`, headers, connections: C }),
          })),
          OBSERVED_ROUNDS,
        );
      const result = { hop: await measure(reads.hop), authenticated: await measure(reads.authenticated) };
      // The spans must have reached Jaeger, or "tracing on" measured nothing.
      const traced = (await (await fetch(`${jaeger.queryUrl}/api/services`)).json()) as { data: string[] | null };
      return { ...result, tracedServices: (traced.data ?? []).sort() };
    });

    // 6. Memory: a warm-up, then a mixed soak; RSS of every process before and after.
    const uploadBody = JSON.stringify({ contentType: 'text/plain', filename: 'bench.txt', size: 1024 });
    const soak = await scenario('6 memory soak', async () => {
      await load({ url: `${gw}${postPath}`, connections: C }, Math.min(5, SOAK_S));
      const warm = Object.fromEntries(Object.entries(processes).map(([n, c]) => [n, rssMb(c.pid)]));
      const each = Math.max(1, SOAK_S / 3);
      await Promise.all([
        load({ url: `${gw}/api/posts?tag=listed&limit=20`, connections: 4 }, SOAK_S),
        load({ url: `${gw}/api/posts/my-posts`, headers: auth, connections: 2 }, SOAK_S),
        (async () => {
          for (let i = 0; i < 3; i++)
            await load(
              { url: `${gw}/upload-url`, method: 'POST', headers: auth, body: uploadBody, connections: 2 },
              each,
            );
        })(),
      ]);
      const after = Object.fromEntries(Object.entries(processes).map(([n, c]) => [n, rssMb(c.pid)]));
      return Object.fromEntries(
        Object.keys(warm).map((n) => [
          n,
          {
            warmMb: warm[n],
            afterMb: after[n],
            growthPct: round((((after[n] ?? 0) - (warm[n] ?? 1)) / (warm[n] ?? 1)) * 100),
          },
        ]),
      );
    });
    const afterLoadMemory = memorySnapshot();
    await db.close();

    process.stdout.write('bench: 11 attacks beside a bystander…\n');
    const attacks: AttacksReport = await attacksScenario();
    process.stdout.write('bench: 12 sessions…\n');
    const sessions: SessionsReport = await sessionsScenario();
    process.stdout.write('bench: 13 realtime…\n');
    const realtime: RealtimeReport = await realtimeScenario();

    const ratio = (a = 0, b = 1) => round(a / b, 3);
    const report = {
      when: new Date().toISOString(),
      durationS: round((Date.now() - started) / 1000),
      settings: { rounds: ROUNDS, durationS: DURATION_S, soakS: SOAK_S, connections: C },
      machine,
      scenarios: {
        gatewayHop: {
          ...hop,
          ratioGatewayToBareProxy: ratio(hop.gateway?.rps, hop['bare proxy']?.rps),
          ratioGatewayToDirect: ratio(hop.gateway?.rps, hop.direct?.rps),
          goal: 'gateway ≥ 0.8 × bare proxy',
        },
        authCost: {
          ...authCost,
          ratio: ratio(authCost.verified?.rps, authCost.unverified?.rps),
          goal: '≥ 0.95',
          baseline: AUTH_BASELINE,
        },
        login: { ...login, ratio: ratio(login.login?.rps, login['bcrypt.compare']?.rps), goal: '≥ 0.9' },
        publicList: { sizes: list, goal: 'service overhead ≤ 2 ms at p50' },
        volume: {
          sizes: volumes,
          changeEveryMs: CHANGE_EVERY_MS,
          goal: 'at 10,000 posts, 10 clients: list by tag with no 5xx and p50 ≤ 50 ms; by id p50 ≤ 5 ms',
        },
        uploadLinks: uploads,
        multipart: {
          sizeMb: MULTIPART_MB,
          partSize: PART_SIZE,
          concurrency: PART_CONCURRENCY,
          ours: { ...multipart.ours, mbPerS: round(MULTIPART_MB * (multipart.ours?.rps ?? 0)) },
          sdk: { ...multipart.sdk, mbPerS: round(MULTIPART_MB * (multipart.sdk?.rps ?? 0)) },
          ratio: ratio(multipart.ours?.rps, multipart.sdk?.rps),
          goal: 'ours ≥ 0.9 × @aws-sdk/lib-storage',
        },
        notModified: { ...cached, ratio304To200: ratio(cached['304']?.rps, cached['200']?.rps) },
        observability: {
          ...observed,
          ratios: Object.fromEntries(
            (['hop', 'authenticated'] as const).map((read) => [
              read,
              Object.fromEntries(
                Object.entries(observed[read])
                  .filter(([name]) => name !== 'off')
                  .map(([name, r]) => [name, pairedRatio(r.rounds, observed[read].off?.rounds ?? [])]),
              ),
            ]),
          ),
          ratioOf: 'median of the round-by-round ratios to off',
          goal: 'metrics ≥ 0.97 × off; tracing (10% sampled, exporting to Jaeger) ≥ 0.9 × off',
        },
        memory: {
          perScenario: memory,
          soak,
          goal: 'no process grows more than 20% across the soak once warm',
          idle: idleMemory,
          afterLoad: afterLoadMemory,
          idleGoal: 'our six processes (the gateway and five services) together ≤ 300 MB',
        },
        attacks,
        sessions,
        realtime,
      },
    };
    writeReport(report);
  } finally {
    await stopAll();
    // The servers' data (up to 10,000 posts) is of no use after the run; KEEP_BENCH_DATA keeps it.
    if (!process.env.KEEP_BENCH_DATA) rmSync(dataDir, { recursive: true, force: true });
  }
}

// biome-ignore lint/suspicious/noExplicitAny: the report is plain JSON built just above
type Report = Record<string, any>;

/**
 * Writes latest.{json,md}. A scenario run alone (BENCH_ONLY) replaces its own figures and keeps
 * those of the other scenarios measured alone before it, each with when it was measured.
 */
function writeReport(report: Report): void {
  mkdirSync(OUT, { recursive: true });
  if (report.only) {
    const file = join(OUT, 'latest.json');
    const previous = (existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : {}) as Report;
    const measuredAlone = previous.only ? (previous.measuredAlone ?? { [previous.only]: previous.when }) : {};
    report = {
      ...report,
      measuredAlone: { ...measuredAlone, [report.only]: report.when },
      scenarios: { ...(previous.only ? previous.scenarios : {}), ...report.scenarios },
    };
  }
  writeFileSync(join(OUT, 'latest.json'), `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(join(OUT, 'latest.md'), markdown(report));
  process.stdout.write(markdown(report));
}

const failed = (x: Report): number => (x.non2xx ?? 0) + (x.errors ?? 0) + (x.timeouts ?? 0);

function markdown(r: Report): string {
  const s = r.scenarios;
  const attacks = s.attacks as AttacksReport | undefined;
  const sessions = s.sessions as SessionsReport | undefined;
  const realtime = s.realtime as RealtimeReport | undefined;
  const pocketbase = s.pocketbase as PocketBaseReport | undefined;
  const rows = [
    ...(s.gatewayHop ? everyScenarioRows(s) : []),
    ...(s.uploadsOneProcess ? uploadLinkRows(s.uploadsOneProcess, ', every part in one process') : []),
    ...(attacks ? attackRows(attacks) : []),
    ...(sessions ? sessionRows(sessions) : []),
    ...(realtime ? realtimeRows(realtime) : []),
    ...(pocketbase ? pocketbaseRows(pocketbase) : []),
  ];
  const m = r.machine;
  return [
    `# Benchmark ${r.when}`,
    '',
    `${m.cores} cores (${m.cpu}), ${m.memoryGb} GB, Node ${m.node}; MongoDB protocol: ${m.mongo}; S3: ${m.storage}.`,
    m.note ? `\n> ${m.note}\n` : '',
    r.only
      ? `Scenarios measured alone (BENCH_ONLY): ${Object.entries(r.measuredAlone ?? { [r.only]: r.when })
          .map(([name, when]) => `${name} at ${when}`)
          .join(', ')}; the last whole run's figures are in this file's history.`
      : `Each figure is the median of ${r.settings.rounds} interleaved rounds of ${r.settings.durationS} s; soak ${r.settings.soakS} s. Whole run ${r.durationS} s. Scenario 9's ratios are the median of its round-by-round ratios to off.`,
    '',
    '| scenario | measured | ratio | goal |',
    '|---|---|---|---|',
    ...rows.map((row) => `| ${row.join(' | ')} |`),
    '',
    ...(attacks ? [attackSection(attacks)] : []),
    ...(pocketbase ? [pocketbaseSection(pocketbase)] : []),
  ].join('\n');
}

/** The rows of scenarios 1 to 10, and memory: those of the whole run. */
function everyScenarioRows(s: Report): [string, string, string, string][] {
  const rows: [string, string, string, string][] = [
    [
      '1 gateway hop',
      `gateway ${s.gatewayHop.gateway.rps.toFixed(0)} rps; bare proxy ${s.gatewayHop['bare proxy'].rps.toFixed(0)}; direct ${s.gatewayHop.direct.rps.toFixed(0)}`,
      `${s.gatewayHop.ratioGatewayToBareProxy} (vs direct ${s.gatewayHop.ratioGatewayToDirect})`,
      s.gatewayHop.goal,
    ],
    [
      '2 authentication (GET /api/posts/:id with a token vs without)',
      `with a token ${s.authCost.verified.rps.toFixed(0)} rps; without ${s.authCost.unverified.rps.toFixed(0)}`,
      String(s.authCost.ratio),
      s.authCost.goal,
    ],
    [
      '3 login',
      `login ${s.login.login.rps.toFixed(1)}/s; bcrypt.compare ${s.login['bcrypt.compare'].rps.toFixed(1)}/s`,
      String(s.login.ratio),
      s.login.goal,
    ],
    ...s.publicList.sizes.map((x: Report) => [
      `4 list, ${x.posts} posts`,
      `query p50 ${x.dbQueryP50Ms} ms (mean ${x.dbQueryMeanMs}); service p50 ${x.serviceP50Ms} ms (mean ${x.serviceMeanMs}); gateway p50 ${x.gatewayP50Ms} ms (mean ${x.gatewayMeanMs})`,
      `Server-Timing split, p50: ${x.overheadInServiceP50Ms} ms in the service, ${x.overheadRoundTripP50Ms} ms round trip (p99 ${x.overheadRoundTripP99Ms}); the service answers from its kept page, the query is what the first list after a change pays`,
      s.publicList.goal,
    ]),
    ...s.volume.sizes.map(
      (v: Report) =>
        [
          `10 embedded default, ${v.posts} posts`,
          `by id ${v.byId.rps.toFixed(0)} rps, p50 ${v.byId.p50} ms, p99 ${v.byId.p99} ms; list by tag, pages kept: ${v.listKept.rps.toFixed(0)} rps, p50 ${v.listKept.p50} ms, p99 ${v.listKept.p99} ms, ${failed(v.listKept)} failed; list while a post changes every ${s.volume.changeEveryMs / 1000} s (${v.listChanging.changes} changes): ${v.listChanging.rps.toFixed(0)} rps, p50 ${v.listChanging.p50} ms, p99 ${v.listChanging.p99} ms, ${failed(v.listChanging)} failed; one list right after a change ${v.firstAfterChangeMs} ms`,
          `by id p50 ${v.byId.p50} ms; list p50 ${v.listKept.p50} ms (${v.listChanging.p50} ms changing), ${failed(v.listKept) + failed(v.listChanging)} failed`,
          s.volume.goal,
        ] as [string, string, string, string],
    ),
    ...uploadLinkRows(s.uploadLinks),
    [
      `8 multipart, ${s.multipart.sizeMb} MiB`,
      `ours ${s.multipart.ours.mbPerS} MiB/s; lib-storage ${s.multipart.sdk.mbPerS} MiB/s (parts of ${s.multipart.partSize / 1048576} MiB, ${s.multipart.concurrency} at a time)`,
      String(s.multipart.ratio),
      s.multipart.goal,
    ],
    [
      '7 304',
      `304 ${s.notModified['304'].rps.toFixed(0)} rps; 200 ${s.notModified['200'].rps.toFixed(0)} rps`,
      String(s.notModified.ratio304To200),
      '(faster than 200)',
    ],
    ...(['hop', 'authenticated'] as const).map(
      (read) =>
        [
          `9 observability, ${read === 'hop' ? 'gateway hop' : 'authenticated read (GET /api/notes)'}`,
          Object.entries(s.observability[read] as Report)
            .map(([name, r]: [string, Report]) => `${name} ${r.rps.toFixed(0)} rps`)
            .join('; '),
          Object.entries(s.observability.ratios[read] as Report)
            .map(([name, x]) => `${name} ${x}`)
            .join('; '),
          s.observability.goal,
        ] as [string, string, string, string],
    ),
    ...Object.entries(s.memory.soak as Report).map(
      ([name, m]: [string, Report]) =>
        [`6 memory, ${name}`, `${m.warmMb} → ${m.afterMb} MB`, `${m.growthPct}%`, '≤ 20%'] as [
          string,
          string,
          string,
          string,
        ],
    ),
  ];
  const memoryRows = (['idle', 'afterLoad'] as const).map(
    (when) =>
      [
        `memory, ${when === 'idle' ? 'idle after start' : 'after the whole run'}`,
        Object.entries(s.memory[when] as Report)
          .map(([name, x]: [string, Report]) => `${name} ${x.rssMb} MB RSS / ${x.pssMb} MB PSS`)
          .join('; '),
        `ours: ${s.memory[when]['ours together'].rssMb} MB RSS, ${s.memory[when]['ours together'].pssMb} MB PSS`,
        s.memory.idleGoal,
      ] as [string, string, string, string],
  );
  rows.push(...memoryRows);
  return rows;
}

void main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
