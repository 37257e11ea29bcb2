/**
 * `npm run bench`: how close each hot path gets to its physical limit, as ratios against
 * baselines measured side by side in the same run (A, B, A, B…, median of the rounds), because
 * absolute numbers on a shared 2-core machine are noise. Writes bench/results/latest.{json,md}.
 *
 * Knobs (environment): BENCH_ROUNDS (5), BENCH_DURATION_S (4), BENCH_SOAK_S (60),
 * BENCH_SIZES (1000,10000), BENCH_VOLUMES (10000,50000), BENCH_MULTIPART_MB (1024), BENCH_MULTIPART_ROUNDS (3),
 * BENCH_OBSERVED_ROUNDS (7), BENCH_OBSERVED_WARMUP_S (15),
 * BENCH_OUT (bench/results), BENCH_BCRYPT_COST (12), MONGO_URL / S3_ENDPOINT,
 * BENCH_ATTACK_POSTS (10000), BENCH_ATTACK_S (25) (scenario 11, scenarios/attacks.ts),
 * BENCH_REVOCATIONS (10000), BENCH_SESSIONS (1000) (scenario 12, scenarios/sessions.ts),
 * BENCH_STREAMS (10000), BENCH_SUBSCRIBERS (1000), BENCH_DELIVERY_S (20) (scenario 13, scenarios/realtime.ts),
 * BENCH_PB_POSTS (10000), BENCH_PB_STARTS (3) (scenario 14, scenarios/pocketbase.ts),
 * BENCH_SEARCH_SIZES (10000,100000) (search beside PocketBase, scenarios/search.ts: BENCH_ONLY=search alone),
 * BENCH_ONLY=attacks, sessions, realtime or pocketbase: scenario 11, 12, 13 or 14 alone, its report in
 * place of the whole run's; BENCH_ONLY=uploads: scenario 5 alone, every part in one process; BENCH_ONLY=thumbnails:
 * scenario 15 (scenarios/thumbnails.ts), only so. Scenario 14 (ours beside PocketBase) runs only so: it starts the whole
 * system as `npm start` does, servers included.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ensureTools, prepareBucket, REPO_ROOT, startMongo, startStorage } from '@cs/devstack';
import { startBenchSystem } from './bench-system';
import { machineOf } from './machine';
import { load } from './measure';
import { watchMemory } from './memory-watch';
import { writeReport } from './report';
import type { ScenarioOptions } from './rounds';
import {
  BCRYPT_COST,
  CONNECTIONS as C,
  DIST,
  DURATION_S,
  NODE,
  PB_POSTS,
  PB_STARTS,
  ROUNDS,
  S3,
  SEARCH_SIZES,
  SECRET,
  SOAK_S,
  VOLUMES,
} from './run-settings';
import { runAttacks } from './scenarios/attacks';
import { authCost } from './scenarios/auth-cost';
import { gatewayHop } from './scenarios/gateway-hop';
import { login } from './scenarios/login';
import { memoryFigures, memorySoak } from './scenarios/memory';
import { multipart } from './scenarios/multipart';
import { notModifiedOf } from './scenarios/not-modified';
import { observability } from './scenarios/observability';
import { runPocketBase } from './scenarios/pocketbase';
import { publicList } from './scenarios/public-list';
import { runRealtime } from './scenarios/realtime';
import { runSearch } from './scenarios/search';
import { runSessions } from './scenarios/sessions';
import { runThumbnails } from './scenarios/thumbnails';
import { measureUploadLinks, runUploadLinks } from './scenarios/upload-links';
import { volumeAt, volumeFigures } from './scenarios/volume';
import { round } from './stats';

/** The scenarios that can run alone; unset: every scenario. */
const ONLY = process.env.BENCH_ONLY ?? '';
if (ONLY && !['attacks', 'sessions', 'realtime', 'pocketbase', 'uploads', 'thumbnails', 'search'].includes(ONLY)) {
  throw new Error(
    `BENCH_ONLY=${ONLY}: only "attacks", "sessions", "realtime", "pocketbase", "uploads", "thumbnails" or "search" runs alone`,
  );
}

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
  /** What every scenario on systems of its own is given: how to measure, and what to stop at the end. */
  const measuring = {
    dist: DIST,
    node: NODE,
    rounds: ROUNDS,
    durationS: DURATION_S,
    connections: C,
    own: (stoppable: { stop(): Promise<unknown> }) => owned.push(stoppable),
    log: (line: string) => process.stdout.write(`${line}\n`),
  };
  /** The report of a scenario run alone (BENCH_ONLY): its figures under their key. */
  const writeAlone = (machine: Record<string, unknown>, scenarios: Record<string, unknown>) =>
    writeReport({
      when: new Date().toISOString(),
      durationS: round((Date.now() - started) / 1000),
      only: ONLY,
      settings: { rounds: ROUNDS, durationS: DURATION_S },
      machine,
      scenarios,
    });

  try {
    if (ONLY === 'pocketbase') {
      // 14. Ours beside PocketBase: each starts everything it needs, so no shared servers here.
      process.stdout.write('bench: 14 PocketBase, alone (BENCH_ONLY)…\n');
      const pocketbase = await runPocketBase({
        ...measuring,
        dataDir: join(dataDir, 'pocketbase'),
        posts: PB_POSTS,
        starts: PB_STARTS,
        bcryptCost: BCRYPT_COST,
      });
      writeAlone(machineOf(pocketbase.servers.mongo, pocketbase.servers.storage), { pocketbase });
      return;
    }
    if (ONLY === 'search') {
      // Search beside PocketBase's `~` filter, on systems of scenario 14's kind.
      process.stdout.write('bench: search beside PocketBase, alone (BENCH_ONLY)…\n');
      const search = await runSearch({
        ...measuring,
        dataDir: join(dataDir, 'search'),
        sizes: SEARCH_SIZES,
        bcryptCost: BCRYPT_COST,
      });
      writeAlone(machineOf(search.servers.mongo, search.servers.storage), { search });
      return;
    }
    if (!process.env.MONGO_URL || !process.env.S3_ENDPOINT) ensureTools();
    const [mongo, storage] = await Promise.all([startMongo({ dataDir }), startStorage({ dataDir, ...S3 })]);
    owned.push(mongo, storage);
    await prepareBucket({ endpoint: storage?.url ?? '', ...S3, corsOrigins: [] });

    /** What scenarios 11, 12 and 13, each on systems of its own, share. */
    const onItsOwnSystem = (name: string): Omit<ScenarioOptions, 'dbPrefix'> => ({
      ...measuring,
      dataDir: join(dataDir, name),
      mongoUrl: mongo?.url ?? '',
      storage: { endpoint: storage?.url ?? '', ...S3 },
      jwtSecret: SECRET,
    });
    // 11. Attacks beside a bystander, on a system of their own with the gateway's limits on.
    const attacksScenario = () =>
      runAttacks({ ...onItsOwnSystem('attacks'), dbPrefix: `b${process.pid}_a_`, bcryptCost: BCRYPT_COST });
    // 12. Sessions: refresh against create, and reads with a revocation list against none.
    const sessionsScenario = () => runSessions({ ...onItsOwnSystem('sessions'), dbPrefix: `b${process.pid}_s` });
    // 13. Live updates: idle streams, delivery, and reads and writes beside open streams.
    const realtimeScenario = () => runRealtime({ ...onItsOwnSystem('realtime'), dbPrefix: `b${process.pid}_r` });
    const machine = {
      ...machineOf(mongo?.kind, storage?.kind),
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
      // 15. Thumbnails (issue 51): only alone, on a system of its own.
      thumbnails: {
        what: '15 thumbnails',
        key: 'thumbnails',
        run: () => runThumbnails({ ...onItsOwnSystem('thumbnails'), dbPrefix: `b${process.pid}_t` }),
      },
    };
    const only = alone[ONLY];
    if (only) {
      process.stdout.write(`bench: ${only.what} alone (BENCH_ONLY)…\n`);
      const figures = await only.run();
      writeAlone(machine, { [only.key]: figures });
      return;
    }

    const b = await startBenchSystem(dataDir, mongo, storage, (stoppable) => owned.push(stoppable));
    const watch = watchMemory(b.system, mongo);
    const { scenario, memorySnapshot } = watch;
    await sleep(3000);
    const idleMemory = memorySnapshot();

    // Scenarios 1 to 10 (scenarios/), in the order they have always run in, each one's memory
    // watched; 10 first near-empty, and again at each volume after 4 has stored its posts.
    const atVolume = await volumeAt(b);
    const volumes = [await scenario('10 embedded default, near-empty', () => atVolume(0))];
    const hop = await scenario('1 gateway hop', () => gatewayHop(b));
    const auth = await scenario('2 authentication cost', () => authCost(b));
    const logins = await scenario('3 login vs bcrypt', () => login(b));
    const list = await scenario('4 public list', () => publicList(b));
    for (const size of VOLUMES)
      volumes.push(await scenario(`10 embedded default, ${size} posts`, () => atVolume(size)));
    // 5. Issuing an upload link, both kinds, through the gateway (scenarios/upload-links.ts).
    const uploads = await scenario('5 upload links', () =>
      measureUploadLinks({
        gw: b.gw,
        token: b.token,
        secret: SECRET,
        postPath: b.postPath,
        connections: C,
        rounds: ROUNDS,
        load: (spec) => load(spec),
      }),
    );
    const parts = await scenario('8 multipart throughput', () => multipart(b, storage));
    const notModified = await notModifiedOf(b);
    const cached = await scenario('7 304 not modified', notModified);
    const observed = await scenario('9 observability cost', () =>
      observability(b, { dataDir, mongo, storage, own: (stoppable) => owned.push(stoppable) }),
    );
    const soak = await scenario('6 memory soak', () => memorySoak(b, watch));
    const afterLoadMemory = memorySnapshot();
    await b.db.close();

    process.stdout.write('bench: 11 attacks beside a bystander…\n');
    const attacks = await attacksScenario();
    process.stdout.write('bench: 12 sessions…\n');
    const sessions = await sessionsScenario();
    process.stdout.write('bench: 13 realtime…\n');
    const realtime = await realtimeScenario();

    writeReport({
      when: new Date().toISOString(),
      durationS: round((Date.now() - started) / 1000),
      settings: { rounds: ROUNDS, durationS: DURATION_S, soakS: SOAK_S, connections: C },
      machine,
      scenarios: {
        gatewayHop: hop,
        authCost: auth,
        login: logins,
        publicList: list,
        volume: volumeFigures(volumes),
        uploadLinks: uploads,
        multipart: parts,
        notModified: cached,
        observability: observed,
        memory: memoryFigures(watch.memory, soak, idleMemory, afterLoadMemory),
        attacks,
        sessions,
        realtime,
      },
    });
  } finally {
    await stopAll();
    // The servers' data (up to 10,000 posts) is of no use after the run; KEEP_BENCH_DATA keeps it.
    if (!process.env.KEEP_BENCH_DATA) rmSync(dataDir, { recursive: true, force: true });
  }
}

void main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
