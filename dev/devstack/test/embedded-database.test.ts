/**
 * The embedded MongoDB-protocol server that `npm start` and the tests run on: FerretDB on Debian's
 * PostgreSQL, with GIN indexes made from the models' own; FerretDB on SQLite when PostgreSQL
 * cannot be had, with the reason given for the launcher to print.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type MongoServer, postgresBin, startMongo } from '@cs/devstack';
import { afterAll, describe, expect, it } from '@jest/globals';
import mongoose, { Schema } from 'mongoose';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'embedded-db-'));
  // PostgreSQL runs as its own user when we are root: it must be able to reach its directory.
  chmodSync(dir, 0o755);
  dirs.push(dir);
  return dir;
}

/** Writes two documents through the server and reads them back, by _id and by an indexed field. */
async function roundTrip(server: MongoServer): Promise<void> {
  const connection = await mongoose.createConnection(`${server.url}/embedded`).asPromise();
  try {
    const Thing = connection.model('Thing', new Schema({ owner: String, at: Date }).index({ owner: 1, at: -1 }));
    await Thing.init();
    const [first] = await Thing.create([
      { owner: 'a', at: new Date() },
      { owner: 'b', at: new Date() },
    ]);
    expect((await Thing.findById(first?._id).lean())?.owner).toBe('a');
    expect((await Thing.find({ owner: 'b' }).lean()).map((t) => t.owner)).toEqual(['b']);
  } finally {
    await connection.close();
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('the embedded MongoDB-protocol server', () => {
  it('when PostgreSQL is installed, then FerretDB runs on it, and every index FerretDB makes gets a GIN twin', async () => {
    const bin = postgresBin({});
    expect(bin).toBeDefined();
    const dir = dataDir();
    const server = await startMongo({ dataDir: dir, env: {} });
    const postgres = server.postgres?.pid;
    try {
      expect(server.kind).toBe('FerretDB v1.24.2 (PostgreSQL)');
      expect(server.fallback).toBeUndefined();
      await roundTrip(server);

      const sql = (query: string) =>
        execFileSync(
          join(bin as string, 'psql'),
          ['-h', join(dir, 'postgres'), '-U', 'postgres', '-d', 'postgres', '-qAtX', '-c', query],
          { encoding: 'utf8' },
        ).trim();
      // FerretDB's own btrees (_id, and the model's owner+at), and a GIN on each of their fields.
      const gin = sql(
        "SELECT string_agg(regexp_replace(indexdef, '.*\\(_jsonb -> ''([^'']+)''.*', '\\1'), ',' ORDER BY indexdef) FROM pg_indexes WHERE schemaname = 'embedded' AND indexdef LIKE '%USING gin%'",
      );
      expect(gin.split(',').sort()).toEqual(['_id', 'at', 'owner']);
      // Each written straight into the index, not queued in a pending list that every query reads.
      expect(
        sql(
          "SELECT bool_and(c.reloptions @> ARRAY['fastupdate=off']) FROM pg_indexes i JOIN pg_class c ON c.relname = i.indexname WHERE i.schemaname = 'embedded' AND i.indexdef LIKE '%USING gin%'",
        ),
      ).toBe('t');
      expect(sql('SHOW plan_cache_mode')).toBe('force_custom_plan');
    } finally {
      await server.stop();
    }
    expect(postgres && isRunning(postgres)).toBe(false);
  });

  it('when FERRETDB_BACKEND=sqlite, then FerretDB runs on SQLite, and says why', async () => {
    const server = await startMongo({ dataDir: dataDir(), env: { FERRETDB_BACKEND: 'sqlite' } });
    try {
      expect(server.kind).toBe('FerretDB v1.24.2 (SQLite)');
      expect(server.fallback).toBe('FERRETDB_BACKEND=sqlite');
      expect(server.postgres).toBeUndefined();
      await roundTrip(server);
    } finally {
      await server.stop();
    }
  });

  it('when PostgreSQL cannot be found, then FerretDB runs on SQLite, and says that PostgreSQL is missing', async () => {
    const server = await startMongo({ dataDir: dataDir(), env: { PG_BIN: '/nowhere' } });
    try {
      expect(server.kind).toBe('FerretDB v1.24.2 (SQLite)');
      expect(server.fallback).toMatch(/PostgreSQL is not installed/);
      await roundTrip(server);
    } finally {
      await server.stop();
    }
  });
});
