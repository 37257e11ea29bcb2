import { randomBytes } from 'node:crypto';
import { basename } from 'node:path';
import { withDatabase } from '@cs/devstack';
import mongoose, { type Connection } from 'mongoose';

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run the tests through jest's global setup (npm test)`);
  return value;
}

/**
 * A database of this test file's own: `t_<file>_<random>`, so files never share state and a run
 * never sees a previous run's leftovers.
 */
export function uniqueDatabaseName(label: string): string {
  const slug = basename(label)
    .replace(/\.test\.[cm]?[jt]s$/, '')
    .replace(/[^a-zA-Z0-9]+/g, '_')
    .slice(0, 30);
  return `t_${slug}_${randomBytes(4).toString('hex')}`;
}

export function testDatabaseUrl(label: string): string {
  return withDatabase(required('MONGO_URL'), uniqueDatabaseName(label));
}

export interface TestDatabase {
  url: string;
  connection: Connection;
  /** Drops the database and closes the connection. */
  drop(): Promise<void>;
}

export async function openTestDatabase(label: string): Promise<TestDatabase> {
  const url = testDatabaseUrl(label);
  const connection = await mongoose.createConnection(url, { serverSelectionTimeoutMS: 5000 }).asPromise();
  return {
    url,
    connection,
    async drop() {
      await connection.dropDatabase().catch(() => undefined);
      await connection.close();
    },
  };
}

export function testStorageSettings() {
  return {
    endpoint: required('S3_ENDPOINT'),
    accessKeyId: required('S3_ACCESS_KEY_ID'),
    secretAccessKey: required('S3_SECRET_ACCESS_KEY'),
    region: required('STORAGE_REGION'),
    bucket: required('STORAGE_BUCKET'),
  };
}
