/**
 * The embedded PostgreSQL under FerretDB: Debian's `postgresql` package, run by us as a plain
 * child process with its own data directory, listening only on a Unix socket in that directory.
 */
import { execFile, execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { type Child, REPO_ROOT, spawnChild, waitFor } from './process';

/** The directory of PostgreSQL's server binaries: PG_BIN, else the newest Debian install. */
export function postgresBin(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.PG_BIN) return existsSync(join(env.PG_BIN, 'postgres')) ? env.PG_BIN : undefined;
  const debian = '/usr/lib/postgresql';
  if (!existsSync(debian)) return undefined;
  const versions = readdirSync(debian)
    .filter((v) => existsSync(join(debian, v, 'bin', 'postgres')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? join(debian, versions[0], 'bin') : undefined;
}

export interface RunningPostgres {
  /** For FerretDB's --postgresql-url: the `postgres` database, through the socket. */
  url: string;
  child: Child;
  stop(): Promise<void>;
}

/**
 * Server settings, all here on its command line. PostgreSQL's defaults otherwise: it keeps the
 * data durable.
 * - No TCP listener: FerretDB reaches it through the socket, and nothing else should.
 * - plan_cache_mode: FerretDB sends each filter's field name as a bind parameter, and a generic
 *   plan cannot match an expression index such as GIN on `_jsonb->'_id'`. A custom plan per query
 *   costs a few microseconds of planning and makes a find by _id an index lookup instead of a scan.
 * - max_logical_replication_workers=0: nothing subscribes to logical replication, and with none
 *   its launcher process (1.5 MB PSS idle) is not started.
 */
const SETTINGS = ['listen_addresses=', 'plan_cache_mode=force_custom_plan', 'max_logical_replication_workers=0'];

/**
 * PostgreSQL refuses to run as root. As root, the data directory belongs to the `postgres` user
 * that Debian's package creates, and `initdb` and the server run as that user: `runuser` for the
 * one-off `initdb`, and `setpriv` for the server, because it execs in place, so that our child is
 * the server itself and our signals reach it.
 */
interface PostgresUser {
  /** The command line that runs `command` as this user; `exec` for the long-running server. */
  wrap(command: string, args: string[], exec: boolean): [string, string[]];
  /** uid and gid to own the data directory, when we are root. */
  owner?: [number, number];
}

function asPostgresUser(): PostgresUser {
  if (process.getuid?.() !== 0) return { wrap: (command, args) => [command, args] };
  const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
  return {
    owner: [uid, gid],
    wrap: (command, args, exec) =>
      exec
        ? ['setpriv', ['--reuid=postgres', '--regid=postgres', '--init-groups', '--', command, ...args]]
        : ['runuser', ['-u', 'postgres', '--', command, ...args]],
  };
}

export async function startPostgres(bin: string, dataDir: string): Promise<RunningPostgres> {
  const dir = join(dataDir, 'postgres');
  const data = join(dir, 'data');
  const user = asPostgresUser();
  mkdirSync(dir, { recursive: true });
  if (user.owner) chownSync(dir, ...user.owner);
  if (!existsSync(join(data, 'PG_VERSION'))) {
    // FerretDB accepts only UTF8 and the C/POSIX or en_US locales: the C locale, as it sorts bytes.
    const [command, args] = user.wrap(
      join(bin, 'initdb'),
      ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-locale', '--no-instructions'],
      false,
    );
    execFileSync(command, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  }
  await predecessorGone(data);
  const settings = SETTINGS.flatMap((setting) => ['-c', setting]);
  const [command, args] = user.wrap(join(bin, 'postgres'), ['-D', data, '-k', dir, ...settings], true);
  // Its parent gone, a fast shutdown as in stopPostgres: a smart one would wait for FerretDB.
  const child = spawnChild({
    name: 'postgres',
    command,
    args,
    logFile: join(dataDir, 'logs', 'postgres.log'),
    parentDeathSignal: 'SIGINT',
  });
  const psql = (...extra: string[]) =>
    promisify(execFile)(join(bin, 'psql'), ['-h', dir, '-U', 'postgres', '-d', 'postgres', '-qX', ...extra]);
  try {
    await waitFor('postgres', () => psql('-c', 'SELECT 1').then(() => true), { child });
    await psql('-v', 'ON_ERROR_STOP=1', '-f', join(REPO_ROOT, 'dev', 'devstack', 'postgres', 'ferretdb-indexes.sql'));
  } catch (err) {
    await stopPostgres(child);
    throw err;
  }
  return {
    url: `postgres://postgres@/postgres?host=${encodeURIComponent(dir)}`,
    child,
    stop: () => stopPostgres(child),
  };
}

/** How long a start waits for the server its data directory's lock file names to be gone. */
const PREDECESSOR_WAIT_MS = 15_000;

/**
 * A server killed a moment ago (SIGKILL to a process group while it was shutting down, as a test
 * runner stops `npm start`) stays in the process table until its new parent reaps it, and
 * PostgreSQL refuses to start while the pid in its lock file is there ("lock file postmaster.pid
 * already exists"). So wait, a while, for that pid to be gone; a server that really runs there
 * still makes the start fail, with PostgreSQL's own message. Its data is recovered from the WAL.
 */
async function predecessorGone(data: string): Promise<void> {
  const lock = join(data, 'postmaster.pid');
  if (!existsSync(lock)) return;
  const pid = Number(readFileSync(lock, 'utf8').split('\n')[0]);
  if (!Number.isInteger(pid) || pid <= 0) return;
  const deadline = Date.now() + PREDECESSOR_WAIT_MS;
  while (existsSync(`/proc/${pid}`) && Date.now() < deadline) await sleep(100);
}

/** SIGINT is PostgreSQL's fast shutdown; SIGTERM (smart) would wait for every client to leave. */
async function stopPostgres(child: Child): Promise<void> {
  child.process.kill('SIGINT');
  await child.stop();
}
