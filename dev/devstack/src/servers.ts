/**
 * The real MongoDB-protocol, S3 and SMTP servers for local runs and tests. An external server
 * named by the environment (MONGO_URL, S3_ENDPOINT, SMTP_URL) always wins; else `mongod` when on
 * PATH, else the pinned FerretDB on Debian's PostgreSQL, else FerretDB on SQLite; versitygw; and
 * Mailpit, all built by scripts/install-tools.sh into .tools/bin.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { postgresBin, type RunningPostgres, startPostgres } from './postgres';
import { type Child, canConnect, freePort, httpOk, REPO_ROOT, spawnChild, waitFor } from './process';

// The file alone, not @cs/mongo's index: the launcher does not load mongoose.
export { withDatabase } from '@cs/mongo/database-url';

export const TOOLS_BIN = join(REPO_ROOT, '.tools', 'bin');

export interface RunningServer {
  kind: string;
  url: string;
  /** Undefined when the server is external (not ours to stop). */
  child?: Child;
  port?: number;
  stop(): Promise<void>;
}

function onPath(command: string): string | undefined {
  try {
    return execFileSync('sh', ['-c', `command -v ${command}`], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}

/** Builds FerretDB, versitygw and Mailpit when missing (first run only). */
export function ensureTools(): void {
  if (['ferretdb', 'versitygw', 'mailpit'].every((tool) => existsSync(join(TOOLS_BIN, tool)))) return;
  execFileSync('bash', [join(REPO_ROOT, 'scripts', 'install-tools.sh')], { stdio: 'inherit' });
}

export interface MongoServer extends RunningServer {
  /** Set when FerretDB runs on SQLite: why it could not run on PostgreSQL. */
  fallback?: string;
  /** The PostgreSQL server under FerretDB, when there is one. */
  postgres?: Child;
}

export interface MongoStartOptions {
  dataDir: string;
  port?: number;
  env?: NodeJS.ProcessEnv;
}

/**
 * The MongoDB-protocol server. FerretDB's backend is PostgreSQL when Debian's package is installed
 * (FERRETDB_BACKEND=sqlite forces SQLite): on SQLite, FerretDB filters only by _id in the database
 * and reads every other query's whole collection, which stops serving lists at about ten thousand
 * posts. `fallback` says why SQLite was used, for the launcher to tell the user.
 */
export async function startMongo({ dataDir, port, env = process.env }: MongoStartOptions): Promise<MongoServer> {
  if (env.MONGO_URL) return { kind: `external (${redact(env.MONGO_URL)})`, url: env.MONGO_URL, stop: async () => {} };
  const listenPort = port ?? (await freePort());
  const url = `mongodb://127.0.0.1:${listenPort}`;
  const mongod = onPath('mongod');
  if (mongod) {
    const dir = join(dataDir, 'mongo');
    mkdirSync(dir, { recursive: true });
    const child = spawnChild({
      name: 'mongod',
      command: mongod,
      args: ['--dbpath', dir, '--port', String(listenPort), '--bind_ip', '127.0.0.1', '--quiet'],
      logFile: join(dataDir, 'logs', 'mongod.log'),
    });
    await waitFor('mongod', () => canConnect(listenPort), { child });
    return { kind: 'mongod', url, child, port: listenPort, stop: async () => void (await child.stop()) };
  }

  const pgBin = env.FERRETDB_BACKEND === 'sqlite' ? undefined : postgresBin(env);
  const fallback =
    env.FERRETDB_BACKEND === 'sqlite'
      ? 'FERRETDB_BACKEND=sqlite'
      : pgBin
        ? undefined
        : "PostgreSQL is not installed (Debian's postgresql package, or PG_BIN)";
  let postgres: RunningPostgres | undefined;
  let backendArgs: string[];
  if (pgBin) {
    postgres = await startPostgres(pgBin, dataDir);
    // FerretDB's pool to PostgreSQL opens up to 50 connections (FerretDB's own pool_max_conns),
    // each a backend of about 8 MB PSS (4 private); with 2, registrations and logins timed out
    // (MongoNetworkTimeoutError) under the contract suite. pgx keeps an idle connection 30
    // minutes, so a burst of load left its backends (50 after one here, 400 MB) for that long:
    // they now go after a minute idle, at pgx's next health check. FerretDB v1.24 sets the
    // parameter to 1m whenever the URL names it.
    backendArgs = ['--postgresql-url', `${postgres.url}&pool_max_conn_idle_time=1m`];
  } else {
    const dir = join(dataDir, 'mongo');
    mkdirSync(dir, { recursive: true });
    backendArgs = ['--sqlite-dir', dir];
  }
  const child = spawnChild({
    name: 'ferretdb',
    command: join(TOOLS_BIN, 'ferretdb'),
    args: ['--listen-addr', `127.0.0.1:${listenPort}`, ...backendArgs],
    // FerretDB allocates much per operation: at GOGC=400 (against Go's 100) a find by _id cost a
    // third less of its CPU (0.40 → 0.27 ms) and its RSS grew from 30 to 43 MB.
    env: { GOGC: env.GOGC ?? '400' },
    logFile: join(dataDir, 'logs', 'ferretdb.log'),
  });
  const stop = async () => {
    await child.stop();
    await postgres?.stop();
  };
  await waitFor('ferretdb', () => canConnect(listenPort), { child }).catch(async (err) => {
    await stop();
    throw err;
  });
  return {
    kind: postgres ? 'FerretDB v1.24.2 (PostgreSQL)' : 'FerretDB v1.24.2 (SQLite)',
    url,
    child,
    port: listenPort,
    fallback,
    postgres: postgres?.child,
    stop,
  };
}

export interface StorageStartOptions {
  dataDir: string;
  port?: number;
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
  env?: NodeJS.ProcessEnv;
}

export async function startStorage(options: StorageStartOptions): Promise<RunningServer> {
  const { dataDir, port, accessKeyId, secretAccessKey, region, env = process.env } = options;
  if (env.S3_ENDPOINT) return { kind: `external (${env.S3_ENDPOINT})`, url: env.S3_ENDPOINT, stop: async () => {} };
  const listenPort = port ?? (await freePort());
  const objects = join(dataDir, 's3', 'objects');
  const meta = join(dataDir, 's3', 'meta');
  mkdirSync(objects, { recursive: true });
  mkdirSync(meta, { recursive: true });
  const child = spawnChild({
    name: 'versitygw',
    command: join(TOOLS_BIN, 'versitygw'),
    args: [
      '--port',
      `127.0.0.1:${listenPort}`,
      '--region',
      region,
      '--quiet',
      '--health',
      '/healthz',
      'posix',
      '--sidecar',
      meta,
      objects,
    ],
    env: { ROOT_ACCESS_KEY_ID: accessKeyId, ROOT_SECRET_ACCESS_KEY: secretAccessKey },
    logFile: join(dataDir, 'logs', 'versitygw.log'),
  });
  const url = `http://127.0.0.1:${listenPort}`;
  await waitFor('versitygw', () => httpOk(`${url}/healthz`), { child });
  return {
    kind: 'versitygw v1.8.0 (POSIX)',
    url,
    child,
    port: listenPort,
    stop: async () => void (await child.stop()),
  };
}

export interface MailStartOptions {
  dataDir: string;
  /** The SMTP port; Mailpit's HTTP port is always a free one. */
  port?: number;
  env?: NodeJS.ProcessEnv;
}

export interface MailServer extends RunningServer {
  /**
   * Mailpit's HTTP address: its web UI, and the API the tests read messages back through.
   * For an external server, MAIL_API_URL if set (else undefined: nothing to read mail back from).
   */
  apiUrl?: string;
}

/** An SMTP server that keeps what it receives: SMTP_URL when set, else Mailpit on loopback. */
export async function startMail({ dataDir, port, env = process.env }: MailStartOptions): Promise<MailServer> {
  if (env.SMTP_URL) {
    return {
      kind: `external (${redact(env.SMTP_URL)})`,
      url: env.SMTP_URL,
      apiUrl: env.MAIL_API_URL || undefined,
      stop: async () => {},
    };
  }
  const smtpPort = port ?? (await freePort());
  let apiPort = await freePort();
  while (apiPort === smtpPort) apiPort = await freePort();
  const dir = join(dataDir, 'mail');
  mkdirSync(dir, { recursive: true });
  const child = spawnChild({
    name: 'mailpit',
    command: join(TOOLS_BIN, 'mailpit'),
    args: [
      '--smtp',
      `127.0.0.1:${smtpPort}`,
      '--listen',
      `127.0.0.1:${apiPort}`,
      '--database',
      join(dir, 'mailpit.db'),
      '--quiet',
      // No calls to the internet: no release check, no reverse DNS of each client.
      '--disable-version-check',
      '--smtp-disable-rdns',
    ],
    logFile: join(dataDir, 'logs', 'mailpit.log'),
  });
  const apiUrl = `http://127.0.0.1:${apiPort}`;
  // The HTTP and SMTP listeners start independently: wait for both.
  const ready = async () => (await httpOk(`${apiUrl}/readyz`)) && (await canConnect(smtpPort));
  await waitFor('mailpit', ready, { child }).catch(async (err) => {
    await child.stop();
    throw err;
  });
  return {
    kind: 'Mailpit v1.27.11',
    url: `smtp://127.0.0.1:${smtpPort}`,
    apiUrl,
    child,
    port: smtpPort,
    stop: async () => void (await child.stop()),
  };
}

export interface RedisStartOptions {
  dataDir: string;
  port?: number;
  env?: NodeJS.ProcessEnv;
}

/**
 * Debian's redis-server (REDIS_SERVER_PATH names another), on loopback, keeping nothing on disk:
 * what it holds (rate-limit counts) is worth less than a clean start.
 */
export async function startRedis({ dataDir, port, env = process.env }: RedisStartOptions): Promise<RunningServer> {
  const command = env.REDIS_SERVER_PATH ?? onPath('redis-server');
  if (!command) throw new Error("redis-server is not installed (Debian's redis-server package, or REDIS_SERVER_PATH)");
  const listenPort = port ?? (await freePort());
  const dir = join(dataDir, 'redis');
  mkdirSync(dir, { recursive: true });
  const child = spawnChild({
    name: 'redis',
    command,
    args: ['--port', String(listenPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
    logFile: join(dataDir, 'logs', `redis-${listenPort}.log`),
  });
  await waitFor('redis', () => canConnect(listenPort), { child });
  return {
    kind: 'Redis (Debian)',
    url: `redis://127.0.0.1:${listenPort}`,
    child,
    port: listenPort,
    stop: async () => void (await child.stop()),
  };
}

function redact(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//***@');
}
