/**
 * The one process never dies silently. `npm start`'s launcher, run as scripts/start.sh runs it,
 * supervises the one process (SERVICES=all): under traffic that writes, the one process is killed
 * with SIGKILL, then aborted with SIGABRT (what V8 does when the heap runs out: it prints "FATAL
 * ERROR ... JavaScript heap out of memory" and aborts). Each time the launcher says so and starts it
 * again on the same port, requests fail only while it is down (an answer or a refused connection,
 * never a hang), every write that was answered 2xx is there afterwards, and the servers the
 * launcher started are the same processes throughout, still running. On SIGTERM the launcher then
 * stops all of it and exits 0; killed with SIGKILL, it leaves none of them running either.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { type Child, freePort, httpOk, NODE_FLAGS, REPO_ROOT, spawnChild, waitFor } from '@cs/devstack';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { LIMITS_OFF } from '../../bench/src/limits-off';
import { OPS, type OpName, type Outcome, Traffic } from '../../bench/src/traffic';
import { recordFigures, sleep, until } from './harness';

const ONE_PROCESS = 'server/dist/src/main.js';

let launcher: Child;
let gatewayUrl: string;
let traffic: Traffic;

/** Running, not a zombie. */
function running(pid: number): boolean {
  const status = `/proc/${pid}/status`;
  try {
    return existsSync(status) && !/^State:\s+Z/m.test(readFileSync(status, 'utf8'));
  } catch {
    return false; // gone between the two reads
  }
}

/** The launcher's children (living), each with its command line. */
function childrenOf(parent: number): { pid: number; command: string }[] {
  const children: { pid: number; command: string }[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid !== parent || !running(Number(entry))) continue;
      const command = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ').trim();
      children.push({ pid: Number(entry), command });
    } catch {
      // exited while we read it
    }
  }
  return children;
}

const onePid = (of = launcher) => childrenOf(of.pid).find((c) => c.command.includes(ONE_PROCESS))?.pid;
/** The servers a launcher started (every child but the one process), by pid. */
const serverPids = (of = launcher) =>
  childrenOf(of.pid)
    .filter((c) => !c.command.includes(ONE_PROCESS))
    .map((c) => c.pid)
    .sort();
const launcherSaid = (of = launcher) => readFileSync(of.logFile, 'utf8');

/**
 * The launcher as scripts/start.sh runs it, with a data directory of its own under
 * .data/faults/crash-restart, kept after the run (its output and the one process's log tell what
 * happened), the last run's only. Resolves once it says Ready.
 */
async function startLauncher(name: string): Promise<{ launcher: Child; gatewayUrl: string }> {
  const dataDir = join(REPO_ROOT, '.data', 'faults', 'crash-restart', name);
  rmSync(dataDir, { recursive: true, force: true });
  const port = await freePort();
  const started = spawnChild({
    name,
    command: process.execPath,
    args: [...NODE_FLAGS, join(REPO_ROOT, 'dev/devstack/dist/src/start.js')],
    logFile: join(dataDir, 'launcher.log'),
    env: {
      PORT: String(port),
      HOST: '127.0.0.1',
      DEV_DATA_DIR: dataDir,
      JWT_SECRET: `crash-restart-${randomBytes(24).toString('hex')}`,
      LOG_LEVEL: 'warn',
      BCRYPT_COST: '4',
      ...LIMITS_OFF,
      // Servers of its own with its own settings, as npm start on a machine that names none (not
      // the test servers that jest's global setup names).
      MONGO_URL: undefined,
      S3_ENDPOINT: undefined,
      S3_ACCESS_KEY_ID: undefined,
      S3_SECRET_ACCESS_KEY: undefined,
      STORAGE_REGION: undefined,
      STORAGE_BUCKET: undefined,
      SMTP_URL: undefined,
      REDIS_URL: undefined,
      SERVICES: undefined,
    },
  });
  await waitFor(name, async () => launcherSaid(started).includes('Ready:'), { timeoutMs: 120_000, child: started });
  return { launcher: started, gatewayUrl: `http://127.0.0.1:${port}` };
}

/** A second launcher, for the test that kills one outright. */
let second: Child | undefined;

beforeAll(async () => {
  ({ launcher, gatewayUrl } = await startLauncher('launcher'));
  const mix = Object.fromEntries(OPS.map((op) => [op, op === 'createPost' || op === 'createNote' ? 1 : 0]));
  traffic = new Traffic({
    baseUrl: gatewayUrl,
    workers: 4,
    mix: mix as Record<OpName, number>,
    // Creates only: nothing is deleted to keep a user's items few.
    keep: Number.MAX_SAFE_INTEGER,
    requestTimeoutMs: 5000,
  });
  await traffic.prepare();
}, 180_000);

afterAll(async () => {
  await traffic?.stop();
  await launcher?.stop(20_000);
  await second?.stop(20_000);
});

/** The longest the one process may take to be ready again, the first restart being at once. */
const BACK_WITHIN_MS = 30_000;

interface Crash {
  signal: NodeJS.Signals;
  pid: number;
  killedAt: number;
  readyAt: number;
  newPid: number;
}

const crashes: Crash[] = [];

/** Sends `signal` to the one process under traffic, and waits until another answers ready. */
async function crash(signal: NodeJS.Signals): Promise<Crash> {
  const pid = onePid();
  if (pid === undefined) throw new Error('no one process');
  const killedAt = Date.now();
  process.kill(pid, signal);
  const back = await until(async () => {
    const other = onePid();
    return other !== undefined && other !== pid && (await httpOk(`${gatewayUrl}/readyz`));
  }, BACK_WITHIN_MS);
  if (back === undefined) throw new Error(`not ready again within ${BACK_WITHIN_MS} ms after ${signal}`);
  const c = { signal, pid, killedAt, readyAt: Date.now(), newPid: onePid() as number };
  crashes.push(c);
  return c;
}

const failed = (o: Outcome) => o.status === 0 || o.status >= 500;
/** Whether a request was under way at some moment of the crash's outage. */
const duringOutage = (o: Outcome, c: Crash) => o.startedAt <= c.readyAt && o.startedAt + o.ms >= c.killedAt;

it('when the one process is killed with SIGKILL and then aborted with SIGABRT under writes, then it is ready again each time, requests fail only while it is down, and every acknowledged write is there', async () => {
  const servers = serverPids();
  // PostgreSQL, FerretDB, versitygw, Mailpit, Redis.
  expect(servers.length).toBeGreaterThanOrEqual(5);
  traffic.start();
  await sleep(1500);
  const killed = await crash('SIGKILL');
  await sleep(1500);
  const aborted = await crash('SIGABRT');
  await sleep(1500);
  await traffic.stop();

  const outcomes = traffic.outcomes;
  const failures = outcomes.filter(failed);
  const verified = await traffic.verify();
  const figures = crashes.map((c) => ({
    signal: c.signal,
    downMs: c.readyAt - c.killedAt,
    requestsDuringOutage: outcomes.filter((o) => duringOutage(o, c)).length,
    failedDuringOutage: failures.filter((o) => duringOutage(o, c)).length,
  }));
  recordFigures('crash-restart', {
    what: "npm start's launcher under 4 writers (creates of posts and notes): the one process killed with SIGKILL, then aborted with SIGABRT (as V8 aborts when the heap runs out)",
    traffic: Traffic.summarize(outcomes),
    crashes: figures,
    failedRequests: failures.length,
    writesVerified: verified.checked,
  });

  const said = launcherSaid();
  expect(said).toContain(`The one process (pid ${killed.pid}) was killed by SIGKILL`);
  expect(said).toContain(`The one process (pid ${aborted.pid}) aborted (SIGABRT`);
  expect(said.match(/Ready again \(pid \d+\)/g)).toHaveLength(2);
  for (const c of crashes) {
    expect(running(c.pid)).toBe(false);
    // Failures there were, while it was down: the traffic ran through the outage.
    expect(figures.find((f) => f.signal === c.signal)?.failedDuringOutage).toBeGreaterThan(0);
  }
  // Every failure was a request under way while the one process was down, and none hung.
  expect(failures.filter((o) => !crashes.some((c) => duringOutage(o, c)))).toEqual([]);
  expect(outcomes.filter((o) => o.error === 'timeout')).toEqual([]);
  expect(outcomes.filter((o) => o.status === 201).length).toBeGreaterThan(100);
  expect(verified.checked).toBe(outcomes.filter((o) => o.status === 201).length);
  expect(verified.problems).toEqual([]);
  // The servers: the same processes, never restarted nor left without their parent.
  expect(serverPids()).toEqual(servers);
  expect(servers.every(running)).toBe(true);
});

it('when the launcher is sent SIGTERM, then it exits 0 and none of its servers or the one process is left running', async () => {
  const left = [...serverPids(), onePid() as number];
  expect(left.every(running)).toBe(true);
  process.kill(launcher.pid, 'SIGTERM');
  expect(await launcher.exited).toBe(0);
  expect(left.filter(running)).toEqual([]);
});

it('when the launcher is killed with SIGKILL, then neither its servers nor the one process is left running without it', async () => {
  second = (await startLauncher('killed')).launcher;
  const left = [...serverPids(second), onePid(second) as number];
  // PostgreSQL, FerretDB, versitygw, Mailpit, Redis and the one process.
  expect(left.length).toBeGreaterThanOrEqual(6);
  expect(left.every(running)).toBe(true);
  process.kill(second.pid, 'SIGKILL');
  expect(await second.exited).toBe('SIGKILL');
  // Each stops on the signal the kernel sends it, PostgreSQL after its fast shutdown.
  const gone = await until(async () => !left.some(running), 20_000);
  expect(left.filter(running)).toEqual([]);
  expect(gone).toBeDefined();
});
