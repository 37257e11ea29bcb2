/**
 * Two builds side by side (issue 32: "no benchmark gets worse"): the build before a change and
 * the build after it, each a whole system started by its own launcher (`npm start`), on one
 * machine at once, measured on the same hot paths interleaved round by round (rounds.ts), so a
 * drift over the run falls on both. The load tool is this checkout's load.js for both.
 *
 * A measure gets worse when after/before, the median of the rounds' paired ratios of requests a
 * second, is below 1 minus the tolerance: how far a build's own rounds spread (1 − slowest/fastest),
 * the larger of the two builds' spreads.
 *
 * `node bench/dist/src/ab.js <before-dir> <after-dir>`: two built checkouts (scripts/bench-ab.sh
 * makes them). Knobs: AB_ROUNDS (5), AB_DURATION_S (5), AB_POSTS (1000), AB_BCRYPT_COST (12),
 * AB_QUIET_MAX_S (1500), AB_OUT (bench/results).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Child, freePort, REPO_ROOT, spawnChild, waitFor } from '@cs/devstack';
import { LIMITS_OFF } from './limits-off';
import type { LoadResult, LoadSpec } from './load';
import { writeResults } from './results';
import { interleave, type LoadSummary, runScript, summarize } from './rounds';
import { pairedRatio, round } from './stats';

const ROUNDS = Number(process.env.AB_ROUNDS ?? 5);
const DURATION_S = Number(process.env.AB_DURATION_S ?? 5);
const POSTS = Number(process.env.AB_POSTS ?? 1000);
const BCRYPT_COST = process.env.AB_BCRYPT_COST ?? '12';
const QUIET_MAX_S = Number(process.env.AB_QUIET_MAX_S ?? 1500);
const OUT = process.env.AB_OUT ?? join(REPO_ROOT, 'bench', 'results');
const C = 10;
const PASSWORD = 'ab-password';
const JSON_TYPE = { 'content-type': 'application/json' };

interface Build {
  name: 'before' | 'after';
  dir: string;
  commit: string;
  url: string;
  launcher: Child;
  /** Filled by seed(). */
  postId: string;
  auth: Record<string, string>;
  email: string;
}

/** The build's own launcher (dev/devstack since issue 32, libs/devstack before), on a port and data directory of its own. */
async function start(name: Build['name'], dir: string): Promise<Build> {
  const launcher = ['dev', 'libs'].map((d) => join(dir, d, 'devstack/dist/src/start.js')).find((f) => existsSync(f));
  if (!launcher) throw new Error(`${dir}: no built devstack launcher (run tsc -b there)`);
  const port = await freePort();
  const dataDir = join(dir, '.data', 'ab');
  rmSync(dataDir, { recursive: true, force: true });
  const log = join(dataDir, 'logs', 'launcher.log');
  const child = spawnChild({
    name,
    command: join(dir, 'node_modules', '.bin', 'node'),
    // As scripts/start.sh runs it: with SERVICES=all the launcher runs every part in one child it supervises.
    args: ['--max-semi-space-size=4', launcher],
    cwd: dir,
    logFile: log,
    env: {
      PORT: String(port),
      HOST: '127.0.0.1',
      DEV_DATA_DIR: dataDir,
      JWT_SECRET: `ab-secret-${'x'.repeat(40)}`,
      LOG_LEVEL: 'warn',
      ...LIMITS_OFF,
      BCRYPT_COST,
      // Each launcher starts servers of its own: none named by our environment.
      MONGO_URL: undefined,
      S3_ENDPOINT: undefined,
      SMTP_URL: undefined,
      REDIS_URL: undefined,
    },
  });
  await waitFor(`${name} system`, async () => readFileSync(log, 'utf8').includes('Ready:'), {
    timeoutMs: 180_000,
    child,
  });
  const commit = execFileSync('git', ['-C', dir, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
  return { name, dir, commit, url: `http://127.0.0.1:${port}`, launcher: child, postId: '', auth: {}, email: '' };
}

async function call(url: string, init: RequestInit): Promise<Record<string, unknown>> {
  const res = await fetch(url, init);
  if (!res.ok) throw new Error(`${init.method ?? 'GET'} ${url}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, unknown>;
}

/** Through the API, as a client would: an account and POSTS published posts, ten at a time. */
async function seed(b: Build): Promise<void> {
  b.email = `ab-${process.pid}@example.com`;
  const body = JSON.stringify({ email: b.email, password: PASSWORD });
  const { token } = await call(`${b.url}/api/auth/register`, { method: 'POST', headers: JSON_TYPE, body });
  b.auth = { ...JSON_TYPE, authorization: `Bearer ${token}` };
  const publish = async (i: number) => {
    const post = { title: `Post ${i}`, body: 'A body of a realistic length for a short post in the list. '.repeat(3) };
    const created = await call(`${b.url}/api/posts`, { method: 'POST', headers: b.auth, body: JSON.stringify(post) });
    const id = created._id as string;
    await call(`${b.url}/api/posts/${id}`, {
      method: 'PUT',
      headers: b.auth,
      body: JSON.stringify({ status: 'published' }),
    });
    return id;
  };
  for (let i = 0; i < POSTS; i += C) {
    const ids = await Promise.all(Array.from({ length: Math.min(C, POSTS - i) }, (_, j) => publish(i + j)));
    b.postId ||= ids[0] as string;
  }
}

/** The hot paths, 10 connections each. */
const MEASURES: Record<string, (b: Build) => Omit<LoadSpec, 'durationS'>> = {
  'GET a post by id': (b) => ({ url: `${b.url}/api/posts/${b.postId}`, connections: C }),
  'POST create a post': (b) => ({
    url: `${b.url}/api/posts`,
    method: 'POST',
    headers: b.auth,
    body: JSON.stringify({ title: 'ab', body: 'a post written by the A/B benchmark' }),
    connections: C,
  }),
  'GET the public list, page 1': (b) => ({ url: `${b.url}/api/posts?page=1`, connections: C }),
  [`POST login (bcrypt cost ${BCRYPT_COST})`]: (b) => ({
    url: `${b.url}/api/auth/login`,
    method: 'POST',
    headers: JSON_TYPE,
    body: JSON.stringify({ email: b.email, password: PASSWORD }),
    connections: C,
  }),
};

const load = (spec: Omit<LoadSpec, 'durationS'>, durationS = DURATION_S) =>
  runScript<LoadResult>(process.execPath, __dirname, 'load.js', [JSON.stringify({ ...spec, durationS })]);

/** Others' tests or benchmarks (they share the machine's cores): their pids. */
function others(): string[] {
  try {
    const out = execFileSync('pgrep', ['-f', 'jest|bench/dist'], { encoding: 'utf8' });
    return out.split('\n').filter((pid) => pid && Number(pid) !== process.pid);
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
}

/** Waits while others run, at most QUIET_MAX_S. */
async function quiet(): Promise<{ waitedS: number; quiet: boolean }> {
  const started = Date.now();
  while (others().length > 0) {
    if (Date.now() - started > QUIET_MAX_S * 1000)
      return { waitedS: round((Date.now() - started) / 1000), quiet: false };
    process.stdout.write(`ab: others are running (${others().join(' ')}); waiting…\n`);
    await sleep(30_000);
  }
  return { waitedS: round((Date.now() - started) / 1000), quiet: true };
}

/** 1 − slowest/fastest of a build's rounds. */
const spread = (rs: LoadResult[]) => {
  const rps = rs.map((r) => r.rps);
  return 1 - Math.min(...rps) / Math.max(...rps);
};

interface Row {
  measure: string;
  before: LoadSummary;
  after: LoadSummary;
  ratio: number;
  tolerance: number;
  verdict: 'worse' | 'not worse';
  /** Rounds that began while others' tests or benchmarks ran. */
  besideOthers: number;
}

async function measure(name: string, spec: (b: Build) => Omit<LoadSpec, 'durationS'>, builds: Build[]): Promise<Row> {
  process.stdout.write(`ab: ${name}…\n`);
  for (const b of builds) await load(spec(b), 2); // warm-up, not counted
  let besideOthers = 0;
  const run = (b: Build) => {
    if (others().length > 0) besideOthers += 1;
    return load(spec(b));
  };
  const rounds = await interleave(
    builds.map((b) => ({ name: b.name, run: () => run(b) })),
    ROUNDS,
  );
  const before = rounds.before ?? [];
  const after = rounds.after ?? [];
  const ratio = pairedRatio(
    after.map((r) => r.rps),
    before.map((r) => r.rps),
  );
  const tolerance = round(Math.max(spread(before), spread(after)), 3);
  const verdict = ratio < 1 - tolerance ? 'worse' : 'not worse';
  return { measure: name, before: summarize(before), after: summarize(after), ratio, tolerance, verdict, besideOthers };
}

function markdown(report: {
  when: string;
  durationS: number;
  builds: Record<string, string>;
  machine: Record<string, unknown>;
  rows: Row[];
}): string {
  const { builds, machine } = report;
  const lines = [
    '# Before and after, interleaved',
    '',
    `${report.when}, ${report.durationS} s. Before: ${builds.before}; after: ${builds.after}. Each a whole system`,
    `started by its own launcher on this machine (${machine.cores} cores, load ${machine.loadAtStart} at the start;`,
    `${machine.quiet}). ${ROUNDS} rounds of ${DURATION_S} s per measure, ${C} connections, interleaved`,
    `(before, after, after, before…), after ${POSTS} posts published through the API.`,
    '',
    'Ratio: after/before, the median of the rounds’ paired ratios of requests a second. Tolerance: the',
    'larger of the two builds’ spreads between their own rounds (1 − slowest/fastest). Worse: ratio < 1 − tolerance.',
    '',
    '| measure | before req/s | after req/s | before p50 ms | after p50 ms | ratio | tolerance | verdict |',
    '|---|---|---|---|---|---|---|---|',
    ...report.rows.map(
      (r) =>
        `| ${r.measure} | ${round(r.before.rps)} | ${round(r.after.rps)} | ${r.before.p50} | ${r.after.p50} | ${r.ratio} | ${r.tolerance} | ${r.verdict} |`,
    ),
    '',
    'Rounds (req/s), before | after:',
    '',
    ...report.rows.map((r) => `- ${r.measure}: ${r.before.rounds.join(', ')} | ${r.after.rounds.join(', ')}`),
    '',
  ];
  const failures = report.rows.filter((r) => r.before.failures + r.after.failures > 0);
  for (const r of failures)
    lines.push(`Failures in ${r.measure}: before ${r.before.failures}, after ${r.after.failures}.`, '');
  for (const r of report.rows.filter((x) => x.besideOthers > 0))
    lines.push(`${r.measure}: ${r.besideOthers} of ${2 * ROUNDS} rounds began while others' tests ran.`, '');
  return lines.join('\n');
}

async function main(): Promise<void> {
  const [beforeDir, afterDir] = process.argv.slice(2).map((d) => resolve(d));
  if (!beforeDir || !afterDir) throw new Error('usage: node bench/dist/src/ab.js <before-dir> <after-dir>');
  const started = Date.now();
  const builds: Build[] = [];
  const stopAll = () => Promise.all(builds.map((b) => b.launcher.stop(30_000)));
  process.once('SIGINT', () => void stopAll().then(() => process.exit(130)));
  try {
    // One after the other: each chooses its ports, and a port chosen but not yet bound is not free.
    builds.push(await start('before', beforeDir));
    builds.push(await start('after', afterDir));
    for (const b of builds) {
      process.stdout.write(`ab: ${b.name} (${b.commit}) at ${b.url}; seeding ${POSTS} posts…\n`);
      await seed(b);
    }
    const wait = await quiet();
    const machine = {
      cores: cpus().length,
      cpu: cpus()[0]?.model,
      loadAtStart: loadavg()
        .map((x) => round(x, 2))
        .join(' '),
      quiet: wait.quiet
        ? `others' tests quiet after waiting ${wait.waitedS} s`
        : `others' tests never quiet in ${wait.waitedS} s: measured beside them`,
    };
    const rows: Row[] = [];
    for (const [name, spec] of Object.entries(MEASURES)) rows.push(await measure(name, spec, builds));
    const report = {
      when: new Date().toISOString(),
      durationS: round((Date.now() - started) / 1000),
      settings: { rounds: ROUNDS, durationS: DURATION_S, connections: C, posts: POSTS, bcryptCost: BCRYPT_COST },
      builds: Object.fromEntries(builds.map((b) => [b.name, b.commit])),
      machine,
      rows,
    };
    writeResults(OUT, 'ab', report, markdown);
  } finally {
    await stopAll();
  }
}

main().catch((err: Error) => {
  console.error(`ab: ${err.stack ?? err.message}`);
  process.exit(1);
});
