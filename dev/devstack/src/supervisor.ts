/**
 * `npm start`'s one process (SERVICES=all), run as a child of the launcher and started again
 * whenever it dies without being asked to: a crash (an uncaught error, out of memory), a SIGKILL
 * (the kernel's OOM killer, a user). The launcher itself stays small: it owns the servers it
 * started and this child, and loads none of the product's code, so a crash of the product takes
 * neither the servers nor the supervisor with it.
 *
 * Each death is said on the launcher's output with how it ended and the last lines the process
 * wrote that were not log records (V8's "JavaScript heap out of memory" and the stack it prints
 * land there); the whole of it is in `<dataDir>/logs/server.log`. The restart waits as
 * restart-backoff.ts says: at once, then longer each time while the process keeps crashing soon
 * after it starts. Once the gateway's /readyz answers 200 again, one line says so.
 */
import { closeSync, existsSync, openSync, readSync, statSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { type RestartBackoff, restartBackoff } from './restart-backoff';
import { type SystemProcess, startSystem, systemReady } from './system';
import type { SystemOptions } from './system-options';

export interface SupervisedSystem {
  gatewayUrl: string;
  /** The one process's metrics, when asked for (the same address after each restart). */
  metricsUrl?: string;
  /** Where the one process writes its output, every run of it appended. */
  logFile: string;
  /** The one process running now (another after each restart). */
  readonly pid: number;
  /** How many times it was started again. */
  readonly restarts: number;
  /** Stops the one process (the gateway drains first) and restarting it; the servers are the caller's. */
  stop(): Promise<void>;
}

export interface SupervisorOptions {
  /** Where each death and each return is said. */
  say?: (line: string) => void;
  backoff?: RestartBackoff;
}

/** The one process started and ready (the gateway's /readyz answers 200), and watched. */
export async function superviseOneProcess(
  options: SystemOptions & { busUrl: string },
  { say = console.log, backoff = restartBackoff() }: SupervisorOptions = {},
): Promise<SupervisedSystem> {
  const firstStart = Date.now();
  const system = await startSystem({ ...options, oneProcess: true });
  const current = () => system.processes.gateway;
  const { logFile, metricsUrl } = current();
  let stopping = false;
  let restarts = 0;
  const stopped = new AbortController();

  /** Starts it again until one run is ready, waiting between runs as `backoff` says. */
  const recover = async (
    dead: SystemProcess,
    how: number | string | null,
    upMs: number,
    logFrom: number,
  ): Promise<void> => {
    const diedAt = Date.now();
    for (;;) {
      const wait = backoff.next(upMs);
      restarts += 1;
      say(
        `${stamp()} The one process (pid ${dead.child.pid}) ${describeExit(how)} after ${seconds(upMs)}.` +
          `${lastWords(logFile, logFrom)}\n${stamp()} Starting it again${wait ? ` in ${seconds(wait)}` : ''} (restart ${restarts}); its output: ${logFile}`,
      );
      if (wait) await sleep(wait, undefined, { signal: stopped.signal }).catch(() => undefined);
      if (stopping) return;
      const startedAt = Date.now();
      logFrom = logSize(logFile);
      try {
        const started = await system.start('gateway');
        await systemReady(system.gatewayUrl);
        if (stopping) return;
        say(`${stamp()} Ready again (pid ${started.child.pid}), ${seconds(Date.now() - diedAt)} after it died.`);
        watch(started, startedAt, logFrom);
        return;
      } catch (err) {
        if (stopping) return;
        // Not ready in time, or it died while starting: that is the next crash of the series.
        dead = current();
        how = await dead.child.stop();
        upMs = Date.now() - startedAt;
        say(`${stamp()} It did not come back: ${(err as Error).message.split('\n')[0]}`);
      }
    }
  };
  /** `logFrom`: where the log file ended when this run started; its last words are after it. */
  const watch = (running: SystemProcess, startedAt: number, logFrom = logSize(logFile)) => {
    void running.child.exited.then((how) => {
      if (!stopping) void recover(running, how, Date.now() - startedAt, logFrom);
    });
  };
  watch(current(), firstStart);

  return {
    gatewayUrl: system.gatewayUrl,
    metricsUrl,
    logFile,
    get pid() {
      return current().child.pid;
    },
    get restarts() {
      return restarts;
    },
    async stop() {
      stopping = true;
      stopped.abort();
      await system.stop();
    },
  };
}

/** How a process ended, from its exit code or the signal that ended it. */
export function describeExit(how: number | string | null): string {
  if (typeof how === 'number') return how === 0 ? 'exited (code 0) unasked' : `exited with code ${how}`;
  if (how === 'SIGABRT') return 'aborted (SIGABRT: a fatal error, such as running out of heap memory)';
  return `was killed by ${how ?? 'an unknown cause'}`;
}

const logSize = (logFile: string) => (existsSync(logFile) ? statSync(logFile).size : 0);

/**
 * The last lines that a run wrote to `logFile` (from `from` on) that are not JSON log records:
 * what V8 and Node write on a fatal error (the heap limit reached, the last garbage collections,
 * a native stack). Only the file's end is read: the log of a long-lived process can be large.
 */
function lastWords(logFile: string, from: number, lines = 6): string {
  const size = logSize(logFile);
  const start = Math.max(from, size - 16 * 1024);
  if (size <= start) return '';
  const buffer = Buffer.alloc(size - start);
  const fd = openSync(logFile, 'r');
  try {
    readSync(fd, buffer, 0, buffer.length, start);
  } finally {
    closeSync(fd);
  }
  const words = buffer
    .toString('utf8')
    .split('\n')
    // Read from the middle of a line, the first one is not whole.
    .slice(start > from ? 1 : 0)
    .map((line) => line.trimEnd())
    .filter((line) => line && !line.startsWith('{'))
    .slice(-lines);
  return words.length ? `\n  Its last words:\n${words.map((line) => `  | ${line}`).join('\n')}` : '';
}

const stamp = () => new Date().toISOString();
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
