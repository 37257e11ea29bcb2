/**
 * Scenario 14's creates under other PostgreSQL settings (issue 47): what group commit and the
 * WAL's way to disk change of a create's cost on FerretDB, measured on the running `npm start`
 * beside PocketBase. Each setting but one keeps what PostgreSQL's defaults keep, and what we run:
 * an acknowledged write is on disk (fsync on, synchronous_commit on). The one that does not is
 * measured only to show what that durability costs; it is never a candidate.
 *
 * A setting is applied to the server `npm start` runs, with ALTER SYSTEM and a reload (each one
 * takes effect at a reload, for every session), checked with SHOW, and reset after its measure.
 * shared_buffers and FerretDB's pool take a restart, and are not measured here: 10,000 posts fit
 * in the default 128 MB of buffers many times over, and the pool never ran short in these runs
 * (FerretDB opens up to 50 connections; 10 clients use fewer).
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { postgresBin } from '@cs/devstack';

export interface DatabaseSetting {
  /** As the report names it. */
  name: string;
  /** PostgreSQL's parameters and their values. */
  settings: Record<string, string>;
  /** Every acknowledged write is on disk when the answer goes. */
  durable: boolean;
  /** What it changes, for the report. */
  what: string;
}

export const DATABASE_SETTINGS: DatabaseSetting[] = [
  {
    name: 'commit_delay=200, commit_siblings=1',
    settings: { commit_delay: '200', commit_siblings: '1' },
    durable: true,
    what: 'a commit waits 200 µs before its WAL flush when another transaction is open, so that more commits share the flush (group commit)',
  },
  {
    name: 'wal_sync_method=open_datasync',
    settings: { wal_sync_method: 'open_datasync' },
    durable: true,
    what: 'the WAL written with O_DSYNC, instead of a write and then fdatasync',
  },
  {
    name: 'synchronous_commit=off',
    settings: { synchronous_commit: 'off' },
    durable: false,
    what: 'the answer goes before the WAL is on disk: a crash loses the last acknowledged writes (measured to show what durability costs; never chosen)',
  },
];

const run = promisify(execFile);

/** psql on the PostgreSQL of the launcher whose data directory is `devDataDir`, as the launcher reaches it. */
async function psql(devDataDir: string, statement: string): Promise<string> {
  const bin = postgresBin();
  if (!bin) throw new Error('no PostgreSQL server binaries: the settings cannot be applied');
  const { stdout } = await run(join(bin, 'psql'), [
    '-h',
    join(devDataDir, 'postgres'),
    '-U',
    'postgres',
    '-d',
    'postgres',
    '-qAtX',
    '-v',
    'ON_ERROR_STOP=1',
    '-c',
    statement,
  ]);
  return stdout.trim();
}

/** Waits until a new session shows each of `names` as `accept` wants: a reload is a signal, taken when the server gets to it. */
async function untilShown(devDataDir: string, names: string[], accept: (shown: string, name: string) => boolean) {
  for (let tries = 0; ; tries++) {
    const shown = await Promise.all(names.map((name) => psql(devDataDir, `SHOW ${name}`)));
    if (shown.every((value, i) => accept(value, names[i] as string))) return;
    if (tries === 20)
      throw new Error(`after a reload the server still shows ${names.map((n, i) => `${n}=${shown[i]}`)}`);
    await sleep(100);
  }
}

/** `value` as SHOW prints it: a time in µs with its unit. */
const shownAs = (value: string) => [value, `${value}us`];

/** Applies `setting` to the running server, and waits until a new session sees it. */
export async function applySetting(devDataDir: string, setting: DatabaseSetting): Promise<void> {
  for (const [name, value] of Object.entries(setting.settings))
    await psql(devDataDir, `ALTER SYSTEM SET ${name} = '${value}'`);
  await psql(devDataDir, 'SELECT pg_reload_conf()');
  await untilShown(devDataDir, Object.keys(setting.settings), (shown, name) =>
    shownAs(setting.settings[name] as string).includes(shown),
  );
}

/** `setting` taken back: the server's own values again (its command line, else PostgreSQL's defaults). */
export async function resetSetting(devDataDir: string, setting: DatabaseSetting): Promise<void> {
  await psql(devDataDir, 'ALTER SYSTEM RESET ALL');
  await psql(devDataDir, 'SELECT pg_reload_conf()');
  await untilShown(
    devDataDir,
    Object.keys(setting.settings),
    (shown, name) => !shownAs(setting.settings[name] as string).includes(shown),
  );
}
