/** PocketBase, the baseline of scenario 14, on a loopback port and data directory of its own. */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { get } from 'node:http';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort, TOOLS_BIN } from '@cs/devstack';
import type { Running } from './running';
import { stopTree } from './stop-tree';

export const POCKETBASE_BIN = join(TOOLS_BIN, 'pocketbase');
/**
 * PocketBase stores a log line for every request unless told otherwise (its default minimum is
 * info, 0); our services run with LOG_LEVEL=warn here. The same on both: warn (slog's 4).
 */
const POCKETBASE_LOG_MIN_LEVEL = '4';

/** The last lines of a log, to say why a start failed. */
function tail(file: string): string {
  if (!existsSync(file)) return '';
  return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-20).join('\n');
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
export async function startPocketBase(dir: string, bcryptCost: string): Promise<Running> {
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
