import { type ChildProcess, spawn } from 'node:child_process';
import {
  closeSync,
  createWriteStream,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { get } from 'node:http';
import { createServer, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** The repository's root: dev/devstack/dist/src → four levels up. */
export const REPO_ROOT = resolve(__dirname, '../../../..');

export interface Child {
  name: string;
  process: ChildProcess;
  pid: number;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves with the exit code (or signal name). */
  stop(graceMs?: number): Promise<number | string | null>;
  exited: Promise<number | string | null>;
  /** Where its stdout and stderr go. */
  logFile: string;
}

export interface SpawnOptions {
  name: string;
  command: string;
  args: string[];
  env?: Record<string, string | undefined>;
  cwd?: string;
  /** Output goes to this file; with `echo`, also to our stdout, prefixed by the name. */
  logFile: string;
  echo?: boolean;
  /**
   * The signal the child gets when we go, however we go (`parentDeath`): SIGTERM unless its own
   * way to stop is another (PostgreSQL's fast shutdown is SIGINT).
   */
  parentDeathSignal?: NodeJS.Signals;
}

/**
 * Children not yet exited, each with the signal that stops it. A process that exits without
 * stopping them (an error, a wrong configuration that ends it) sends each its signal as it goes;
 * one that cannot (SIGKILL, an abort) leaves that to the kernel (`parentDeath`). Either way none is
 * left running without its parent.
 */
const living = new Map<ChildProcess, NodeJS.Signals>();
process.once('exit', () => {
  for (const [child, signal] of living) child.kill(signal);
});

/** util-linux's setpriv, where it is (every Debian has it: util-linux is essential). */
const SETPRIV =
  process.platform === 'linux' ? ['/usr/bin/setpriv', '/bin/setpriv'].find((path) => existsSync(path)) : undefined;

/**
 * `command` and `args` such that the child gets `signal` from the kernel when this process ends,
 * even by SIGKILL or an abort, when no code of ours runs to stop it: Linux's parent-death signal
 * (prctl PR_SET_PDEATHSIG), which Node does not offer, set by setpriv before it execs the command
 * in its place (same pid). A change of user clears that setting, so when the command is itself a
 * setpriv that changes user (PostgreSQL's, run as root), the option joins that one, which sets it
 * after the change. Without setpriv (not Linux), the command as it is: the 'exit' handler above
 * is then all there is, and a SIGKILL of this process leaves its children running.
 */
export function parentDeath(command: string, args: string[], signal: NodeJS.Signals): [string, string[]] {
  const option = `--pdeathsig=${signal.replace(/^SIG/, '')}`;
  if (command === 'setpriv' || command === SETPRIV) return [command, [option, ...args]];
  return SETPRIV ? [SETPRIV, [option, '--', command, ...args]] : [command, args];
}

export function spawnChild({
  name,
  command,
  args,
  env,
  cwd,
  logFile,
  echo = false,
  parentDeathSignal = 'SIGTERM',
}: SpawnOptions): Child {
  mkdirSync(dirname(logFile), { recursive: true });
  // The child writes its own log file unless we must echo it: then its output passes through us.
  const fd = echo ? undefined : openSync(logFile, 'a');
  const [file, argv] = parentDeath(command, args, parentDeathSignal);
  const child = spawn(file, argv, {
    cwd: cwd ?? REPO_ROOT,
    env: { ...process.env, ...env },
    stdio: fd === undefined ? ['ignore', 'pipe', 'pipe'] : ['ignore', fd, fd],
  });
  if (fd !== undefined) closeSync(fd);
  const log = fd === undefined ? createWriteStream(logFile, { flags: 'a' }) : undefined;
  for (const stream of [child.stdout, child.stderr]) {
    stream?.on('data', (chunk: Buffer) => {
      log?.write(chunk);
      for (const line of chunk.toString().split('\n')) if (line) process.stdout.write(`[${name}] ${line}\n`);
    });
  }
  living.set(child, parentDeathSignal);
  const exited = new Promise<number | string | null>((resolveExit) => {
    child.once('exit', (code, signal) => {
      living.delete(child);
      log?.end();
      resolveExit(code ?? signal);
    });
  });
  // A command that cannot be run (ENOENT, EACCES) has no pid and is reported by the throw below;
  // the 'error' event that follows it, unheard, would end this process.
  child.on('error', () => {});
  if (child.pid === undefined) throw new Error(`${name}: could not start ${command}`);
  return {
    name,
    process: child,
    pid: child.pid,
    exited,
    logFile,
    async stop(graceMs = 10_000) {
      if (child.exitCode !== null || child.signalCode !== null) return exited;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      const result = await exited;
      clearTimeout(timer);
      return result;
    },
  };
}

/**
 * The kernel's ephemeral range, from which every outgoing connection takes its source port. A
 * port chosen by binding port 0 comes from it too, and between our choosing it and a server
 * binding it, any connection (a database pool's, a scrape's) may take it: the server then fails
 * to start with EADDRINUSE. We choose below it instead, where no connection ever lands.
 */
function ephemeralStart(): number {
  const path = '/proc/sys/net/ipv4/ip_local_port_range';
  const start = existsSync(path) ? Number(readFileSync(path, 'utf8').trim().split(/\s+/)[0]) : Number.NaN;
  return Number.isInteger(start) ? start : 32768;
}

const LOWEST_PORT = 15_000;
/** Never the same port twice from one process, even once the first is closed again. */
const handedOut = new Set<number>();

/**
 * Ports handed out lately by any launcher on this machine, a file each. Two launchers (two jest
 * workers, a loop beside a suite) each find a port free a moment ago; both would hand it out, one
 * child would fail with EADDRINUSE, and the other launcher's health check would be answered by
 * the first launcher's process, a system wired to another's server. A claim is made with O_EXCL,
 * so one launcher gets each port; it lasts far longer than a system takes to bind its ports.
 */
const CLAIMS_DIR = join(tmpdir(), 'cs-devstack-ports');
const CLAIM_MS = 10 * 60_000;
let pruned = false;

/** Whether this process now holds the claim on `port`. */
function claim(port: number): boolean {
  mkdirSync(CLAIMS_DIR, { recursive: true });
  if (!pruned) {
    pruned = true;
    for (const name of readdirSync(CLAIMS_DIR)) {
      const file = join(CLAIMS_DIR, name);
      try {
        if (Date.now() - statSync(file).mtimeMs > CLAIM_MS) unlinkSync(file);
      } catch {
        // Another launcher pruned it first.
      }
    }
  }
  try {
    writeFileSync(join(CLAIMS_DIR, String(port)), String(process.pid), { flag: 'wx' });
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
}

/** Whether `port` on loopback can be listened on now (no timeout: a busy event loop cannot fake an answer). */
export function canBind(port: number): Promise<boolean> {
  return new Promise((resolveBound) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolveBound(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolveBound(true)));
  });
}

/**
 * A port free a moment ago and claimed by no other launcher, below the ephemeral range (see
 * `ephemeralStart`), or within the range given.
 */
export async function freePort({
  lowest = LOWEST_PORT,
  highest = ephemeralStart() - 1,
}: {
  lowest?: number;
  highest?: number;
} = {}): Promise<number> {
  if (highest < lowest) return osPort(); // a range set unusually low: the OS chooses
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = lowest + Math.floor(Math.random() * (highest - lowest + 1));
    if (handedOut.has(port) || !(await canBind(port)) || !claim(port)) continue;
    handedOut.add(port);
    return port;
  }
  return osPort();
}

/** A port the OS picks from its ephemeral range. */
function osPort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolvePort(port));
    });
  });
}

export function canConnect(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolveOk) => {
    const socket = new Socket();
    const done = (ok: boolean) => {
      socket.destroy();
      resolveOk(ok);
    };
    socket.setTimeout(500);
    socket.once('connect', () => done(true));
    socket.once('timeout', () => done(false));
    socket.once('error', () => done(false));
    socket.connect(port, host);
  });
}

/**
 * Polls `probe` until it is true, or fails naming `what` (and the child's log, if it died, or
 * what `why` says when the time is up).
 */
export async function waitFor(
  what: string,
  probe: () => Promise<boolean>,
  { timeoutMs = 30_000, child, why }: { timeoutMs?: number; child?: Child; why?: () => Promise<string> } = {},
) {
  const deadline = Date.now() + timeoutMs;
  let exited = false;
  void child?.exited.then(() => {
    exited = true;
  });
  while (Date.now() < deadline) {
    if (exited) throw new Error(`${what}: the process exited before it was ready${logTail(child)}`);
    if (await probe().catch(() => false)) return;
    await sleep(100);
  }
  const reason = why ? `: ${await why().catch((err: unknown) => String(err))}` : '';
  throw new Error(`${what}: not ready after ${timeoutMs} ms${reason}`);
}

/** The last lines a child wrote, to say why it died. */
function logTail(child?: Child): string {
  if (!child || !existsSync(child.logFile)) return '';
  const lines = readFileSync(child.logFile, 'utf8').trimEnd().split('\n').slice(-15);
  return `; the end of ${child.logFile}:\n${lines.join('\n')}`;
}

/**
 * Whether a GET of `url` answers 2xx within a second. Through node:http, not fetch: fetch loads
 * undici, about 15 MB that the launcher would then keep for as long as the system runs.
 */
export function httpOk(url: string): Promise<boolean> {
  return httpAnswer(url).then(({ status }) => status >= 200 && status < 300);
}

/** The status and body of a GET, with httpOk's timeout: to say why a check fails. */
export function httpAnswer(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolveAnswer, reject) => {
    const req = get(url, { timeout: 1000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.once('end', () => resolveAnswer({ status: res.statusCode ?? 0, body }));
      res.once('error', reject);
    });
    req.once('timeout', () => req.destroy(new Error(`GET ${url}: no answer within 1 s`)));
    req.once('error', reject);
  });
}
