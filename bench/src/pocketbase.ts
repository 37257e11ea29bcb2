/**
 * Scenario 14 (issue 36): the content service beside PocketBase, what a small team would run
 * instead of us. `BENCH_ONLY=pocketbase npm run bench`.
 *
 * Ours is the whole system as `npm start` runs it (npm, then scripts/start.sh: its setup, then the
 * launcher and everything the launcher starts), on a port and data directory of its own; its
 * memory counts every process of that tree, npm's own included, as a user's `ps` would. PocketBase is
 * .tools/bin/pocketbase (scripts/pocketbase: v0.40.4 with a `posts` collection and rules like
 * ours, bcrypt at the same cost), on a loopback port and a data directory of its own. Both are
 * seeded through their APIs with the same posts and the same number of users, and measured side
 * by side, interleaved round by round (rounds.ts), 10 clients, the load in a process of its own:
 * a post by id, a create, a publish (a draft made published: PocketBase's update of the same
 * field), seeding (create + publish, 16 in flight), the public list by tag, the login, the list
 * while a post is published every 0.5 s, the memory of every process at idle after start (RSS and
 * PSS), and the time from start to ready. On PostgreSQL, the create again under other settings of
 * its own (database-settings.ts).
 *
 * Knobs: BENCH_ROUNDS, BENCH_DURATION_S and BENCH_BCRYPT_COST (run.ts), BENCH_PB_POSTS (10000),
 * BENCH_PB_STARTS (3: restarts of each, for the time to ready), BENCH_PB_PUBLISHES (500: drafts
 * published a round).
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, openSync, readFileSync, readlinkSync } from 'node:fs';
import { get } from 'node:http';
import { basename, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort, REPO_ROOT, TOOLS_BIN } from '@cs/devstack';
import { cpuBetween, cpuSnapshot, type ProcessGroups } from './cpu';
import { applySetting, DATABASE_SETTINGS, type DatabaseSetting, resetSetting } from './database-settings';
import { LIMITS_OFF } from './limits-off';
import type { LoadResult, LoadSpec } from './load';
import { interleave, type LoadSummary, runScript, summarize } from './rounds';
import { memoryOf, processName, processTree } from './rss';
import { type Author, createDraft, publish, type SeedResult, type System } from './seed-load';
import { median, pairedRatio, round } from './stats';

export const POCKETBASE_BIN = join(TOOLS_BIN, 'pocketbase');
/** Seeding's posts in flight, on each system. */
const SEED_IN_FLIGHT = 16;
/** Users on each system: seeding's authors, one per post in flight; the first also logs in and creates. */
const USERS = SEED_IN_FLIGHT;
/** The publishes of (i) in a round, on each system: drafts made before it, untimed. */
const PUBLISHES = Number(process.env.BENCH_PB_PUBLISHES ?? 500);
/** The writer beside the list of (g): one post published this often. */
const PUBLISH_EVERY_MS = 500;
/** How long both sit idle after start before their memory is read (as run.ts's idle memory). */
const IDLE_S = 3;
/** Each measure's warm-up per system, not counted. */
const WARMUP_S = 2;
const PASSWORD = 'bench-password';
/** What the launcher runs: a Node process running it is the launcher. */
const LAUNCHER = 'dev/devstack/dist/src/start.js';
/**
 * PocketBase stores a log line for every request unless told otherwise (its default minimum is
 * info, 0); our services run with LOG_LEVEL=warn here. The same on both: warn (slog's 4).
 */
const POCKETBASE_LOG_MIN_LEVEL = '4';

export interface PocketBaseOptions {
  dataDir: string;
  dist: string;
  node: string;
  rounds: number;
  durationS: number;
  connections: number;
  posts: number;
  /** Restarts of each system for the time to ready. */
  starts: number;
  bcryptCost: string;
  own(stoppable: { stop(): Promise<unknown> }): void;
  log(line: string): void;
}

interface Memory {
  rssMb: number;
  pssMb: number;
  processes: number;
}

interface MemoryOfSide extends Memory {
  /** By kind: npm, sh, launcher, node, postgres, ferretdb, versitygw, mailpit, redis-server. */
  byName: Record<string, Memory>;
}

interface Running {
  system: System;
  url: string;
  pid: number;
  /** From spawning it to its first ready answer (ours: the launcher's Ready line; PocketBase: /api/health). */
  readyMs: number;
  /** Ours: what the launcher says it started (MongoDB protocol, S3, how many processes). */
  servers: Record<string, string>;
  stop(): Promise<void>;
}

/** Where one side's CPU went over its measured rounds: ms per request, by kind of process. */
export interface CpuPerRequest {
  /** node, ferretdb, postgres…, or pocketbase; the load generator's own apart. */
  msPerRequest: Record<string, number>;
  /** The load generator's, in its own process. */
  loadGeneratorMs: number;
  /** Cores the machine kept busy on average over the rounds (every process, anyone's). */
  machineBusyCores: number;
}

export interface SideBySide {
  ours: LoadSummary;
  pocketbase: LoadSummary;
  /** Absent from runs before it was measured. */
  cpu?: Record<System, CpuPerRequest>;
  /** Ours over PocketBase: requests a second (median of the paired rounds), p50 and p99 (of the medians). */
  ratio: number;
  p50Ratio: number;
  p99Ratio: number;
}

export interface PocketBaseReport {
  pocketbase: string;
  ours: string;
  servers: Record<string, string>;
  posts: number;
  users: number;
  bcryptCost: number;
  connections: number;
  rounds: number;
  durationS: number;
  byId: SideBySide;
  create: SideBySide;
  /** The create again under other PostgreSQL settings (database-settings.ts); absent on SQLite and from older runs. */
  createUnder?: Array<{ setting: DatabaseSetting; create: SideBySide }>;
  /** Absent from runs before it was measured. */
  publish?: {
    count: number;
    inFlight: number;
    ours: { postsPerS: number; p50: number; rounds: number[]; failures: number };
    pocketbase: { postsPerS: number; p50: number; rounds: number[]; failures: number };
    ratio: number;
  };
  seeding: {
    inFlight: number;
    ours: { postsPerS: number; p50: number; rounds: number[]; failures: number };
    pocketbase: { postsPerS: number; p50: number; rounds: number[]; failures: number };
    ratio: number;
  };
  list: SideBySide & { paths: { ours: string; pocketbase: string } };
  login: SideBySide;
  listWhilePublishing: SideBySide & { everyMs: number; published: { ours: number; pocketbase: number } };
  memory: {
    afterStart: { ours: MemoryOfSide; pocketbase: MemoryOfSide; rssRatio: number; pssRatio: number };
    afterRestart: { ours: MemoryOfSide; pocketbase: MemoryOfSide; rssRatio: number; pssRatio: number };
  };
  startToReady: {
    ours: { firstMs: number; restartsMs: number[]; medianMs: number };
    pocketbase: { firstMs: number; restartsMs: number[]; medianMs: number };
    ratio: number;
  };
  goals: Record<string, string>;
}

// ---------- the two systems ----------

/** The last lines of a log, to say why a start failed. */
function tail(file: string): string {
  if (!existsSync(file)) return '';
  return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-20).join('\n');
}

/** When a process started (/proc/<pid>/stat, field 22), to tell it from a later one with its pid. */
function startTime(pid: number): string {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? '';
  } catch {
    return '';
  }
}

/**
 * SIGTERM to the process (for ours npm, whose end is a SIGTERM to the launcher, which stops what it
 * started), then, once its whole tree as read before has exited or after `graceMs`, SIGKILL to
 * whatever of it is still that same process.
 */
async function stopTree(child: ChildProcess, graceMs = 30_000): Promise<void> {
  const pid = child.pid;
  if (pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const tree = processTree(pid).map((p) => [p, startTime(p)] as const);
  let timer: NodeJS.Timeout | undefined;
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    timer = setTimeout(resolve, graceMs);
  });
  const deadline = Date.now() + graceMs;
  child.kill('SIGTERM');
  await exited;
  clearTimeout(timer);
  while (Date.now() < deadline && tree.some(([p, started]) => started && startTime(p) === started)) await sleep(50);
  for (const [p, started] of tree) {
    if (!started || startTime(p) !== started) continue; // gone, as it should be
    try {
      process.kill(p, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
}

/** `npm start` (its script: setup, then the launcher, which execs in place), timed to its Ready line. */
async function startOurs(dir: string, bcryptCost: string): Promise<Running> {
  mkdirSync(dir, { recursive: true });
  const logFile = join(dir, 'launcher.log');
  const log = createWriteStream(logFile, { flags: 'a' });
  const port = await freePort();
  const started = performance.now();
  const child = spawn('npm', ['start'], {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DEV_DATA_DIR: join(dir, 'data'),
      JWT_SECRET: `pb-bench-secret-${'x'.repeat(40)}`,
      LOG_LEVEL: 'warn',
      ...LIMITS_OFF,
      BCRYPT_COST: bcryptCost,
      // The launcher starts servers of its own: none named by our environment.
      MONGO_URL: undefined,
      S3_ENDPOINT: undefined,
      SMTP_URL: undefined,
      REDIS_URL: undefined,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const ready = new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`ours: not ready in 300 s; see ${logFile}`)), 300_000);
    const onData = (chunk: Buffer) => {
      log.write(chunk);
      out += chunk.toString();
      if (out.includes('Ready:')) {
        clearTimeout(timer);
        resolve(performance.now() - started);
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (chunk: Buffer) => log.write(chunk));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`ours: npm start exited (${code}) before it was ready:\n${out.slice(-3000)}`));
    });
  });
  const readyMs = await ready.catch(async (err: unknown) => {
    await stopTree(child);
    throw err;
  });
  const servers: Record<string, string> = {};
  for (const [key, label] of [
    ['mongo', 'MongoDB protocol:'],
    ['storage', 'S3 storage:'],
    ['processes', 'Processes:'],
  ] as const) {
    const line = out.split('\n').find((l) => l.startsWith(label));
    if (line)
      servers[key] = line
        .slice(label.length)
        .trim()
        .replace(/ at \S+$/, '');
  }
  return {
    system: 'ours',
    url: `http://127.0.0.1:${port}`,
    pid: child.pid as number,
    readyMs,
    servers,
    stop: async () => {
      await stopTree(child);
      log.end();
    },
  };
}

function healthy(url: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = get(url, { timeout: 1000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.once('timeout', () => req.destroy());
    req.once('error', () => resolve(false));
  });
}

/** PocketBase on loopback, timed from exec to its /api/health answering 200 (polled every 5 ms). */
async function startPocketBase(dir: string, bcryptCost: string): Promise<Running> {
  mkdirSync(dir, { recursive: true });
  const logFile = join(dir, 'pocketbase.log');
  const fd = openSync(logFile, 'a');
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const started = performance.now();
  const child = spawn(
    POCKETBASE_BIN,
    [
      'serve',
      '--http',
      `127.0.0.1:${port}`,
      '--dir',
      join(dir, 'pb_data'),
      // PocketBase guesses `go run` (and turns on its SQL echo) when its binary is under the temp directory.
      '--dev=false',
      '--bcrypt-cost',
      bcryptCost,
      '--log-min-level',
      POCKETBASE_LOG_MIN_LEVEL,
    ],
    { stdio: ['ignore', fd, fd] },
  );
  let exited = false;
  child.once('exit', () => {
    exited = true;
  });
  const deadline = Date.now() + 60_000;
  while (!(await healthy(`${url}/api/health`))) {
    if (exited) throw new Error(`PocketBase exited before it was ready:\n${tail(logFile)}`);
    if (Date.now() > deadline) {
      await stopTree(child);
      throw new Error(`PocketBase not ready in 60 s:\n${tail(logFile)}`);
    }
    await sleep(5);
  }
  return {
    system: 'pocketbase',
    url,
    pid: child.pid as number,
    readyMs: performance.now() - started,
    servers: {},
    stop: () => stopTree(child),
  };
}

/**
 * What a process is, by its command name (postgres, ferretdb, redis-server…); a Node process (whose
 * main thread names itself MainThread) by what it runs: npm, the launcher, or else `node`.
 */
function kindOf(pid: number): string {
  try {
    if (basename(readlinkSync(`/proc/${pid}/exe`)) === 'node') {
      const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      // npm names itself by its command ("npm start", one string in place of its arguments).
      if (/^npm( |$)/.test(args[0] ?? '') || args.some((a) => a.endsWith('npm-cli.js'))) return 'npm';
      if (args.some((a) => a.endsWith(LAUNCHER))) return 'launcher';
      return 'node';
    }
  } catch {
    // gone, or not ours to read: its command name says enough
  }
  return processName(pid) || 'gone';
}

/** A process and all its descendants, grouped by kind (as memoryOfTree), for CPU time. */
function processGroups(root: number): ProcessGroups {
  const groups: ProcessGroups = {};
  const pids = processTree(root);
  for (const pid of pids) {
    const kind = kindOf(pid);
    const group = groups[kind] ?? { pids: [] };
    group.pids.push(pid);
    groups[kind] = group;
  }
  return groups;
}

/** RSS and PSS of a process and all its descendants, and by kind. */
function memoryOfTree(root: number): MemoryOfSide {
  const pids = processTree(root);
  const groups = new Map<string, number[]>();
  for (const pid of pids) {
    const name = kindOf(pid);
    groups.set(name, [...(groups.get(name) ?? []), pid]);
  }
  const byName = Object.fromEntries(
    [...groups]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([name, ps]) => [name, { ...memoryOf(ps), processes: ps.length }]),
  );
  return { ...memoryOf(pids), processes: pids.length, byName };
}

// ---------- the API calls ----------

async function json(url: string, init: RequestInit): Promise<Record<string, unknown>> {
  const res = await fetch(url, init);
  if (!res.ok) throw new Error(`${init.method ?? 'GET'} ${url}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, unknown>;
}

const JSON_TYPE = { 'content-type': 'application/json' };

/** A user with PASSWORD, as a client registers one: its token and id. */
async function register(system: System, url: string, email: string): Promise<Author> {
  if (system === 'ours') {
    const { token } = await json(`${url}/api/auth/register`, {
      method: 'POST',
      headers: JSON_TYPE,
      body: JSON.stringify({ email, password: PASSWORD }),
    });
    const payload = JSON.parse(Buffer.from(String(token).split('.')[1] ?? '', 'base64url').toString());
    return { token: String(token), id: String(payload.id) };
  }
  await json(`${url}/api/collections/users/records`, {
    method: 'POST',
    headers: JSON_TYPE,
    body: JSON.stringify({ email, password: PASSWORD, passwordConfirm: PASSWORD }),
  });
  const auth = await json(`${url}/api/collections/users/auth-with-password`, {
    method: 'POST',
    headers: JSON_TYPE,
    body: JSON.stringify({ identity: email, password: PASSWORD }),
  });
  return { token: String(auth.token), id: String((auth.record as { id: string }).id) };
}

/** The first page of the public list of posts tagged "listed", newest first, with its total. */
const listPath: Record<System, string> = {
  ours: '/api/posts?tag=listed&limit=20',
  // The tags are a JSON list: `~` is SQL LIKE on its text, so the quotes match the whole tag. The
  // id breaks ties, as ours does.
  pocketbase: `/api/collections/posts/records?page=1&perPage=20&sort=-created,-id&filter=${encodeURIComponent(`tags ~ '"listed"'`)}`,
};

const byIdPath = (system: System, id: string) =>
  system === 'ours' ? `/api/posts/${id}` : `/api/collections/posts/records/${id}`;

// ---------- the scenario ----------

export async function runPocketBase(o: PocketBaseOptions): Promise<PocketBaseReport> {
  if (!existsSync(POCKETBASE_BIN))
    throw new Error(`${POCKETBASE_BIN} is missing: bash scripts/install-tools.sh pocketbase builds it`);
  // "pocketbase version v0.40.4"
  const pocketbaseVersion = execFileSync(POCKETBASE_BIN, ['--version'], { encoding: 'utf8' }).trim().split(' ').pop();
  const oursVersion = execFileSync('git', ['-C', REPO_ROOT, 'describe', '--always', '--dirty'], {
    encoding: 'utf8',
  }).trim();
  const dirs: Record<System, string> = { ours: join(o.dataDir, 'ours'), pocketbase: join(o.dataDir, 'pocketbase') };
  const running: Partial<Record<System, Running>> = {};
  const stop = async (system: System) => {
    const r = running[system];
    delete running[system];
    await r?.stop();
  };
  o.own({ stop: () => Promise.all([stop('ours'), stop('pocketbase')]) });
  const start = async (system: System) => {
    const r =
      system === 'ours'
        ? await startOurs(dirs.ours, o.bcryptCost)
        : await startPocketBase(dirs.pocketbase, o.bcryptCost);
    running[system] = r;
    return r;
  };
  const both = () => [running.ours, running.pocketbase] as Running[];

  // (f) and (h), first part: each started on an empty data directory, then both idle.
  o.log(`bench: 14 PocketBase (${pocketbaseVersion}) beside ours (${oursVersion}): starting both…`);
  const ours = await start('ours');
  const pb = await start('pocketbase');
  o.log(`bench: ours ready in ${round(ours.readyMs)} ms, PocketBase in ${round(pb.readyMs)} ms`);
  await sleep(IDLE_S * 1000);
  const afterStart = { ours: memoryOfTree(ours.pid), pocketbase: memoryOfTree(pb.pid) };

  // Users, then (c) seeding: the posts in `rounds` chunks, each system's chunk in turn.
  const authors: Record<System, Author[]> = { ours: [], pocketbase: [] };
  for (const r of both())
    for (let u = 0; u < USERS; u++)
      authors[r.system].push(await register(r.system, r.url, `pb-bench-${u}@example.com`));
  const chunk = Math.ceil(o.posts / o.rounds);
  const seeded: Record<System, number> = { ours: 0, pocketbase: 0 };
  const firstId: Record<System, string> = { ours: '', pocketbase: '' };
  o.log(`bench: 14 seeding ${o.posts} posts on each, ${SEED_IN_FLIGHT} in flight…`);
  const seedRounds = await interleave<SeedResult>(
    both().map((r) => ({
      name: r.system,
      run: async () => {
        const count = Math.min(chunk, o.posts - seeded[r.system]);
        const result = await runScript<SeedResult>(o.node, o.dist, 'seed-load.js', [
          JSON.stringify({
            system: r.system,
            url: r.url,
            authors: authors[r.system],
            first: seeded[r.system],
            count,
            inFlight: SEED_IN_FLIGHT,
          }),
        ]);
        seeded[r.system] += count;
        firstId[r.system] ||= result.firstId;
        return result;
      },
    })),
    o.rounds,
  );
  const seedSummary = (rs: SeedResult[]) => ({
    postsPerS: round(median(rs.map((x) => x.postsPerS))),
    p50: round(median(rs.map((x) => x.p50))),
    rounds: rs.map((x) => Math.round(x.postsPerS)),
    failures: rs.reduce((n, x) => n + x.failures, 0),
  });
  for (const system of ['ours', 'pocketbase'] as const)
    if (!firstId[system]) throw new Error(`${system}: seeding wrote no post`);

  // The measures: each system warmed up, then both interleaved.
  const load = (spec: Omit<LoadSpec, 'durationS'>, durationS = o.durationS) =>
    runScript<LoadResult>(o.node, o.dist, 'load.js', [JSON.stringify({ ...spec, durationS })]);
  const sideBySide = async (
    what: string,
    spec: (r: Running) => Omit<LoadSpec, 'durationS'>,
    {
      around,
      durationS = o.durationS,
    }: {
      around?: (r: Running, measure: () => Promise<LoadResult>) => Promise<LoadResult>;
      durationS?: number;
    } = {},
  ): Promise<SideBySide> => {
    o.log(`bench: 14 ${what}…`);
    const exact = (r: Running) => ({ ...spec(r), exactLatency: true });
    for (const r of both()) await load(exact(r), Math.min(WARMUP_S, durationS));
    const spent: Record<
      System,
      { cpuMs: Record<string, number>; busyMs: number; windowMs: number; requests: number; loadMs: number }
    > = {
      ours: { cpuMs: {}, busyMs: 0, windowMs: 0, requests: 0, loadMs: 0 },
      pocketbase: { cpuMs: {}, busyMs: 0, windowMs: 0, requests: 0, loadMs: 0 },
    };
    const rounds = await interleave(
      both().map((r) => ({
        name: r.system,
        run: async () => {
          const before = cpuSnapshot(processGroups(r.pid));
          const result = await (around ? around(r, () => load(exact(r), durationS)) : load(exact(r), durationS));
          const window = cpuBetween(before, cpuSnapshot(processGroups(r.pid)));
          const side = spent[r.system];
          for (const [kind, ms] of Object.entries(window.cpuMs)) side.cpuMs[kind] = (side.cpuMs[kind] ?? 0) + ms;
          side.busyMs += window.machineBusyCores * window.windowMs;
          side.windowMs += window.windowMs;
          side.requests += result.requests;
          side.loadMs += result.cpuMs ?? 0;
          return result;
        },
      })),
      o.rounds,
    );
    const s = { ours: summarize(rounds.ours ?? []), pocketbase: summarize(rounds.pocketbase ?? []) };
    const perRequest = (side: (typeof spent)[System]): CpuPerRequest => {
      const per = (ms: number) => round(ms / Math.max(side.requests, 1), 3);
      return {
        msPerRequest: Object.fromEntries(
          Object.entries(side.cpuMs)
            .filter(([, ms]) => ms > 0)
            .sort(([, a], [, b]) => b - a)
            .map(([kind, ms]) => [kind, per(ms)]),
        ),
        loadGeneratorMs: per(side.loadMs),
        machineBusyCores: round(side.busyMs / Math.max(side.windowMs, 1), 2),
      };
    };
    return {
      ...s,
      cpu: { ours: perRequest(spent.ours), pocketbase: perRequest(spent.pocketbase) },
      ratio: pairedRatio(s.ours.rounds, s.pocketbase.rounds),
      p50Ratio: round(s.ours.p50 / (s.pocketbase.p50 || Number.NaN), 2),
      p99Ratio: round(s.ours.p99 / (s.pocketbase.p99 || Number.NaN), 2),
    };
  };
  const C = o.connections;
  const [ourAuthor, pbAuthor] = [authors.ours[0] as Author, authors.pocketbase[0] as Author];
  const authorOf = (r: Running) => (r.system === 'ours' ? ourAuthor : pbAuthor);

  // (a) One published post by id, anonymous.
  const byId = await sideBySide('a post by id', (r) => ({
    url: `${r.url}${byIdPath(r.system, firstId[r.system])}`,
    connections: C,
  }));

  // (d) The public list by tag, first page.
  const list = await sideBySide('the list by tag', (r) => ({ url: `${r.url}${listPath[r.system]}`, connections: C }));

  // (g) The same list while one post is published every PUBLISH_EVERY_MS: drafts made before
  // each round, published on a fixed schedule during it.
  const published: Record<System, number> = { ours: 0, pocketbase: 0 };
  let draftNo = 1_000_000;
  const whilePublishing = await sideBySide(
    'the list while posts are published',
    (r) => ({ url: `${r.url}${listPath[r.system]}`, connections: C }),
    {
      around: async (r, measure) => {
        const author = authorOf(r);
        const drafts: string[] = [];
        for (let i = 0; i < Math.ceil((o.durationS * 1000) / PUBLISH_EVERY_MS) + 2; i++)
          drafts.push(await createDraft(r.system, r.url, author, draftNo++, 'listed'));
        let writing = true;
        const writer = (async () => {
          const t0 = Date.now();
          for (let n = 0; writing && drafts.length > 0; n++) {
            await publish(r.system, r.url, author, drafts.shift() as string);
            published[r.system] += 1;
            const wait = t0 + (n + 1) * PUBLISH_EVERY_MS - Date.now();
            if (wait > 0) await sleep(wait);
          }
        })();
        const result = await measure();
        writing = false;
        await writer;
        return result;
      },
    },
  );

  // (e) The login, at the same bcrypt cost on both: rounds twice as long, as a round ends with
  // up to 10 logins of a second or more each in flight, which it does not count.
  const login = await sideBySide(
    'the login',
    (r) =>
      r.system === 'ours'
        ? {
            url: `${r.url}/api/auth/login`,
            method: 'POST',
            headers: JSON_TYPE,
            body: JSON.stringify({ email: 'pb-bench-0@example.com', password: PASSWORD }),
            connections: C,
          }
        : {
            url: `${r.url}/api/collections/users/auth-with-password`,
            method: 'POST',
            headers: JSON_TYPE,
            body: JSON.stringify({ identity: 'pb-bench-0@example.com', password: PASSWORD }),
            connections: C,
          },
    { durationS: 2 * o.durationS },
  );

  // (b) A create, last: its drafts add to what the other measures read.
  const body = 'A post written by the benchmark, of a realistic length for a short post.';
  const createSpec = (r: Running): Omit<LoadSpec, 'durationS'> => ({
    url: r.system === 'ours' ? `${r.url}/api/posts` : `${r.url}/api/collections/posts/records`,
    method: 'POST',
    headers: { ...JSON_TYPE, authorization: `Bearer ${authorOf(r).token}` },
    body: JSON.stringify(
      r.system === 'ours'
        ? { title: 'A bench post', body, tags: ['other'] }
        : { title: 'A bench post', content: body, tags: ['other'], published: false, author: pbAuthor.id },
    ),
    connections: C,
  });
  const create = await sideBySide('a create', createSpec);

  // (j) The create again under other PostgreSQL settings, each applied to ours alone and reset
  // after; PocketBase measured beside each, as in (b).
  const createUnder: Array<{ setting: DatabaseSetting; create: SideBySide }> = [];
  if (ours.servers.mongo?.includes('PostgreSQL'))
    for (const setting of DATABASE_SETTINGS) {
      const devDataDir = join(dirs.ours, 'data');
      await applySetting(devDataDir, setting);
      try {
        createUnder.push({ setting, create: await sideBySide(`a create, ${setting.name}`, createSpec) });
      } finally {
        await resetSetting(devDataDir, setting);
      }
    }

  // (i) A publish alone: the first author's drafts, PUBLISHES a round made before it (untimed),
  // then published C at a time, as (b) creates them. PocketBase's is its update of the field.
  o.log(`bench: 14 a publish, ${PUBLISHES} drafts a round…`);
  let publishFrom = 2_000_000;
  const publishRounds = await interleave<SeedResult>(
    both().map((r) => ({
      name: r.system,
      run: async () => {
        const first = publishFrom;
        publishFrom += PUBLISHES;
        return runScript<SeedResult>(o.node, o.dist, 'seed-load.js', [
          JSON.stringify({
            system: r.system,
            url: r.url,
            authors: [authorOf(r)],
            first,
            count: PUBLISHES,
            inFlight: C,
            publishOnly: true,
          }),
        ]);
      },
    })),
    o.rounds,
  );

  // (h) From start to ready, with the data in place and nothing changed: each stopped, then
  // started again alone, in turn. The last restart's memory at idle, with the posts stored.
  o.log(`bench: 14 start to ready, ${o.starts} restarts of each…`);
  const firstMs = { ours: ours.readyMs, pocketbase: pb.readyMs };
  const servers = ours.servers;
  await stop('ours');
  await stop('pocketbase');
  const restartsMs: Record<System, number[]> = { ours: [], pocketbase: [] };
  const afterRestart: Partial<Record<System, MemoryOfSide>> = {};
  for (let s = 0; s < o.starts; s++) {
    const order: System[] = s % 2 === 0 ? ['ours', 'pocketbase'] : ['pocketbase', 'ours'];
    for (const system of order) {
      const r = await start(system);
      restartsMs[system].push(round(r.readyMs));
      if (s === o.starts - 1) {
        await sleep(IDLE_S * 1000);
        afterRestart[system] = memoryOfTree(r.pid);
      }
      await stop(system);
    }
  }
  const startSummary = (system: System) => ({
    firstMs: round(firstMs[system]),
    restartsMs: restartsMs[system],
    medianMs: round(median(restartsMs[system])),
  });
  const memoryPair = (m: Partial<Record<System, MemoryOfSide>>) => ({
    ours: m.ours as MemoryOfSide,
    pocketbase: m.pocketbase as MemoryOfSide,
    rssRatio: round((m.ours?.rssMb ?? 0) / (m.pocketbase?.rssMb || Number.NaN), 2),
    pssRatio: round((m.ours?.pssMb ?? 0) / (m.pocketbase?.pssMb || Number.NaN), 2),
  });
  const startToReady = { ours: startSummary('ours'), pocketbase: startSummary('pocketbase') };
  const seeding = {
    inFlight: SEED_IN_FLIGHT,
    ours: seedSummary(seedRounds.ours ?? []),
    pocketbase: seedSummary(seedRounds.pocketbase ?? []),
    ratio: pairedRatio(
      (seedRounds.ours ?? []).map((x) => x.postsPerS),
      (seedRounds.pocketbase ?? []).map((x) => x.postsPerS),
    ),
  };
  const publishes = {
    count: PUBLISHES,
    inFlight: C,
    ours: seedSummary(publishRounds.ours ?? []),
    pocketbase: seedSummary(publishRounds.pocketbase ?? []),
    ratio: pairedRatio(
      (publishRounds.ours ?? []).map((x) => x.postsPerS),
      (publishRounds.pocketbase ?? []).map((x) => x.postsPerS),
    ),
  };
  return {
    pocketbase: pocketbaseVersion ?? '',
    ours: oursVersion,
    servers,
    posts: o.posts,
    users: USERS,
    bcryptCost: Number(o.bcryptCost),
    connections: C,
    rounds: o.rounds,
    durationS: o.durationS,
    byId,
    create,
    createUnder,
    publish: publishes,
    seeding,
    list: { ...list, paths: listPath },
    login,
    listWhilePublishing: { ...whilePublishing, everyMs: PUBLISH_EVERY_MS, published },
    memory: { afterStart: memoryPair(afterStart), afterRestart: memoryPair(afterRestart) },
    startToReady: {
      ...startToReady,
      ratio: round(startToReady.ours.medianMs / (startToReady.pocketbase.medianMs || Number.NaN), 2),
    },
    goals: {
      byId: 'req/s ≥ 1 × PocketBase (never below 0.5 ×); p50 ≤ 2 × PocketBase',
      create: 'req/s ≥ 0.5 × PocketBase',
      publish: 'posts/s ≥ 0.5 × PocketBase',
      listWhilePublishing: 'p99 ≤ 0.25 × PocketBase',
      memory: 'ours ≤ 250 MB PSS in all, and ≤ 10 × PocketBase',
      startToReady: 'ours ≤ 3 s when nothing changed',
    },
  };
}

// ---------- the report ----------

const rps = (x: LoadSummary) => `${x.rps.toFixed(0)} req/s`;
const ms = (x: number) => `${round(x, 2)} ms`;
const mb = (x: Memory) => `${Math.round(x.rssMb)} / ${Math.round(x.pssMb)} MB`;

/** The rows of the report's main table. */
export function pocketbaseRows(r: PocketBaseReport): [string, string, string, string][] {
  const pair = (x: SideBySide, p = 'p50') =>
    `ours ${rps(x.ours)}, ${p} ${ms(p === 'p50' ? x.ours.p50 : x.ours.p99)}; PocketBase ${rps(x.pocketbase)}, ${p} ${ms(p === 'p50' ? x.pocketbase.p50 : x.pocketbase.p99)}`;
  const m = r.memory.afterStart;
  return [
    [
      `14 PocketBase: a post by id, ${r.posts} posts`,
      pair(r.byId),
      `${r.byId.ratio} (p50 ${r.byId.p50Ratio} ×)`,
      r.goals.byId ?? '',
    ],
    ['14 PocketBase: a create', pair(r.create), `${r.create.ratio} (p50 ${r.create.p50Ratio} ×)`, r.goals.create ?? ''],
    ...(r.publish
      ? [
          [
            `14 PocketBase: a publish, ${r.publish.inFlight} in flight`,
            `ours ${r.publish.ours.postsPerS} posts/s, p50 ${ms(r.publish.ours.p50)}; PocketBase ${r.publish.pocketbase.postsPerS} posts/s, p50 ${ms(r.publish.pocketbase.p50)}`,
            String(r.publish.ratio),
            r.goals.publish ?? '',
          ] as [string, string, string, string],
        ]
      : []),
    [
      `14 PocketBase: seeding, create + publish, ${r.seeding.inFlight} in flight`,
      `ours ${r.seeding.ours.postsPerS} posts/s; PocketBase ${r.seeding.pocketbase.postsPerS} posts/s`,
      String(r.seeding.ratio),
      '',
    ],
    [`14 PocketBase: list by tag, ${r.posts} posts`, pair(r.list), `${r.list.ratio} (p50 ${r.list.p50Ratio} ×)`, ''],
    [`14 PocketBase: login, bcrypt cost ${r.bcryptCost}`, pair(r.login), String(r.login.ratio), ''],
    [
      '14 PocketBase: memory idle after start, every process, RSS / PSS',
      `ours ${mb(m.ours)} (${m.ours.processes} processes); PocketBase ${mb(m.pocketbase)}`,
      `RSS ${m.rssRatio} ×, PSS ${m.pssRatio} ×`,
      r.goals.memory ?? '',
    ],
    [
      `14 PocketBase: list while a post is published every ${r.listWhilePublishing.everyMs / 1000} s`,
      pair(r.listWhilePublishing, 'p99'),
      `${r.listWhilePublishing.ratio} (p99 ${r.listWhilePublishing.p99Ratio} ×)`,
      r.goals.listWhilePublishing ?? '',
    ],
    [
      '14 PocketBase: start to ready, nothing changed',
      `ours ${ms(r.startToReady.ours.medianMs)}; PocketBase ${ms(r.startToReady.pocketbase.medianMs)}`,
      `${r.startToReady.ratio} ×`,
      r.goals.startToReady ?? '',
    ],
  ];
}

/** The issue's table (a row per work, ours / PocketBase), and what each side's memory is made of. */
export function pocketbaseSection(r: PocketBaseReport): string {
  const line = (x: LoadSummary, p: 'p50' | 'p99' = 'p50') => `${rps(x)}, ${p} ${ms(x[p])}`;
  const memoryParts = (m: MemoryOfSide) =>
    Object.entries(m.byName)
      .map(([name, x]) => `${name}${x.processes > 1 ? ` ×${x.processes}` : ''} ${mb(x)}`)
      .join('; ');
  const { afterStart, afterRestart } = r.memory;
  const cpuLine = (c: CpuPerRequest) =>
    `${Object.entries(c.msPerRequest)
      .map(([kind, msPer]) => `${kind} ${msPer}`)
      .join(', ')}; load generator ${c.loadGeneratorMs}; machine ${c.machineBusyCores} cores busy`;
  return [
    `## 14. Beside PocketBase (${r.pocketbase})`,
    '',
    `Ours: \`npm start\` at ${r.ours} (${Object.values(r.servers).join(', ')}). The same ${r.posts} posts (a tenth tagged "listed") and ${r.users} users on each, through their APIs; ${r.connections} clients; ${r.rounds} interleaved rounds of ${r.durationS} s; bcrypt cost ${r.bcryptCost} on both. Ratios are ours / PocketBase: of requests a second (the median of the paired rounds), and of latencies and memory.`,
    '',
    '| work | content service | PocketBase | ratio |',
    '|---|---|---|---|',
    `| one post by id, ${r.posts} posts | ${line(r.byId.ours)} | ${line(r.byId.pocketbase)} | ${r.byId.ratio} (p50 ${r.byId.p50Ratio} ×) |`,
    `| create a post | ${line(r.create.ours)} | ${line(r.create.pocketbase)} | ${r.create.ratio} (p50 ${r.create.p50Ratio} ×) |`,
    ...(r.publish
      ? [
          `| publish a draft (PocketBase: update the field), ${r.publish.inFlight} in flight, ${r.publish.count} a round | ${r.publish.ours.postsPerS} posts/s, p50 ${ms(r.publish.ours.p50)} | ${r.publish.pocketbase.postsPerS} posts/s, p50 ${ms(r.publish.pocketbase.p50)} | ${r.publish.ratio} |`,
        ]
      : []),
    `| seeding, create + publish, ${r.seeding.inFlight} in flight | ${r.seeding.ours.postsPerS} posts/s (rounds ${r.seeding.ours.rounds.join(', ')}) | ${r.seeding.pocketbase.postsPerS} posts/s (rounds ${r.seeding.pocketbase.rounds.join(', ')}) | ${r.seeding.ratio} |`,
    `| list by tag, first page, ${r.posts} posts | ${line(r.list.ours)} | ${line(r.list.pocketbase)} | ${r.list.ratio} (p50 ${r.list.p50Ratio} ×) |`,
    `| login at bcrypt cost ${r.bcryptCost} | ${r.login.ours.rps.toFixed(1)}/s | ${r.login.pocketbase.rps.toFixed(1)}/s | ${r.login.ratio} |`,
    `| memory idle after start, all processes, RSS / PSS | ${mb(afterStart.ours)} | ${mb(afterStart.pocketbase)} | ${afterStart.rssRatio} × / ${afterStart.pssRatio} × |`,
    `| the same after a restart with the posts stored | ${mb(afterRestart.ours)} | ${mb(afterRestart.pocketbase)} | ${afterRestart.rssRatio} × / ${afterRestart.pssRatio} × |`,
    `| list while a post is published every ${r.listWhilePublishing.everyMs / 1000} s, ${r.posts} posts | ${line(r.listWhilePublishing.ours, 'p99')} | ${line(r.listWhilePublishing.pocketbase, 'p99')} | ${r.listWhilePublishing.ratio} (p99 ${r.listWhilePublishing.p99Ratio} ×) |`,
    `| start to ready, nothing changed (median of ${r.startToReady.ours.restartsMs.length}) | ${ms(r.startToReady.ours.medianMs)} | ${ms(r.startToReady.pocketbase.medianMs)} | ${r.startToReady.ratio} × |`,
    '',
    ...createUnderSection(r),
    `Failures: ${[r.byId, r.create, r.list, r.login, r.listWhilePublishing].reduce((n, x) => n + x.ours.failures, 0) + r.seeding.ours.failures + (r.publish?.ours.failures ?? 0)} ours, ${[r.byId, r.create, r.list, r.login, r.listWhilePublishing].reduce((n, x) => n + x.pocketbase.failures, 0) + r.seeding.pocketbase.failures + (r.publish?.pocketbase.failures ?? 0)} PocketBase. Posts published beside the list: ${r.listWhilePublishing.published.ours} ours, ${r.listWhilePublishing.published.pocketbase} PocketBase. First start, on an empty data directory: ours ${ms(r.startToReady.ours.firstMs)}, PocketBase ${ms(r.startToReady.pocketbase.firstMs)}.`,
    '',
    `Memory idle after start, RSS / PSS: ours ${memoryParts(afterStart.ours)}. After a restart with the posts: ${memoryParts(afterRestart.ours)}; PocketBase ${mb(afterRestart.pocketbase)}.`,
    '',
    "Where the CPU went, in CPU-ms per request over the measured rounds, by kind of process (/proc: utime + stime, PostgreSQL's ended backends included), and the cores the machine kept busy; the load generator runs in a process of its own:",
    '',
    '| work | content service | PocketBase |',
    '|---|---|---|',
    ...(
      [
        ['one post by id', r.byId],
        ['create a post', r.create],
        ['list by tag', r.list],
      ] as const
    ).map(([work, x]) =>
      // Runs before the split was measured have none.
      x.cpu
        ? `| ${work} | ${cpuLine(x.cpu.ours)} | ${cpuLine(x.cpu.pocketbase)} |`
        : `| ${work} | not measured | not measured |`,
    ),
    '',
  ].join('\n');
}

/** The creates under other PostgreSQL settings: a table, when the run measured them. */
function createUnderSection(r: PocketBaseReport): string[] {
  if (!r.createUnder?.length) return [];
  const cpu = (x: SideBySide) =>
    x.cpu
      ? Object.entries(x.cpu.ours.msPerRequest)
          .map(([kind, ms]) => `${kind} ${ms}`)
          .join(', ')
      : '';
  return [
    `Creates under other PostgreSQL settings, each applied to ours alone (ALTER SYSTEM, a reload) and reset after, PocketBase measured beside each; the first row is ours as it runs (PostgreSQL's defaults: fsync on, synchronous_commit on, commit_delay 0, wal_sync_method fdatasync):`,
    '',
    '| setting | keeps every acknowledged write | ours | PocketBase | ratio | ours, CPU-ms per create |',
    '|---|---|---|---|---|---|',
    `| as we run | yes | ${rps(r.create.ours)}, p50 ${ms(r.create.ours.p50)} | ${rps(r.create.pocketbase)} | ${r.create.ratio} | ${cpu(r.create)} |`,
    ...r.createUnder.map(
      ({ setting, create }) =>
        `| ${setting.name}: ${setting.what} | ${setting.durable ? 'yes' : '**no**'} | ${rps(create.ours)}, p50 ${ms(create.ours.p50)} | ${rps(create.pocketbase)} | ${create.ratio} | ${cpu(create)} |`,
    ),
    '',
  ];
}
