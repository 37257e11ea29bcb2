/** Ours as a user starts it: `npm start`, on a port and data directory of its own. */
import { spawn } from 'node:child_process';
import { createWriteStream, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, REPO_ROOT } from '@cs/devstack';
import { LIMITS_OFF } from '../limits-off';
import type { Running } from './running';
import { stopTree } from './stop-tree';

/** `npm start` (its script: setup, then the launcher, which execs in place), timed to its Ready line. */
export async function startOurs(dir: string, bcryptCost: string): Promise<Running> {
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
  const databaseUrl = / at (\S+)$/.exec(out.split('\n').find((l) => l.startsWith('MongoDB protocol:')) ?? '')?.[1];
  return {
    system: 'ours',
    ...(databaseUrl ? { databaseUrl } : {}),
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
