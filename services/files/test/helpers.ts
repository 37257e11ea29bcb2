import { createHash } from 'node:crypto';
import { basename } from 'node:path';
import { overTheNetwork } from '@cs/lifecycle';
import type { DeletedAccounts } from '@cs/mongo';
import { ObjectStorage } from '@cs/storage';
import {
  api,
  type Caller,
  captureLogger,
  newCaller,
  openTestDatabase,
  TEST_FRONTEND_ORIGIN,
  TEST_JWT_SECRET,
  type TestDatabase,
  testStorageSettings,
  verifierWithoutRevocations,
} from '@cs/testkit';
import { createApp } from '../src/app';
import { type Config, readConfig } from '../src/config';
import type { Removals } from '../src/removals/removals';
import type { Sweeper } from '../src/sweeper/sweeper';
import { type UploadModel, uploadModel } from '../src/uploads/model';
import type { Uploads } from '../src/uploads/uploads';

export interface FilesHarness {
  app: Awaited<ReturnType<typeof createApp>>['app'];
  http: ReturnType<typeof api>;
  model: UploadModel;
  uploads: Uploads;
  /** The sweeper's steps, each called on its own (the server runs them every SWEEP_INTERVAL). */
  sweeper: Sweeper;
  /** The outbox that tells notes of attachments the check removed. */
  removals: Removals;
  /** The service's tombstones of deleted accounts. */
  accounts: DeletedAccounts;
  /** The service's own storage client, the one its releases and sweeper call. */
  storage: ObjectStorage;
  /** A storage client of the test's own, to look at what really is in the bucket. */
  bucket: ObjectStorage;
  db: TestDatabase;
  logs: ReturnType<typeof captureLogger>;
  config: Config;
  close(): Promise<void>;
}

/**
 * A bucket of the test file's own, on the run's S3 server: a sweeper under test lists and deletes
 * only what this file put there, never another suite's objects.
 */
export async function bucketOf(file: string): Promise<ReturnType<typeof testStorageSettings>> {
  const name = basename(file)
    .replace(/\.test\.ts$/, '')
    .toLowerCase()
    .replace(/[^a-z0-9-]/g, '-');
  const tag = createHash('sha256').update(`${file} ${process.pid}`).digest('hex').slice(0, 8);
  const settings = { ...testStorageSettings(), bucket: `files-${name}-${tag}`.slice(0, 63) };
  const storage = new ObjectStorage(settings);
  try {
    await storage.ensureBucket([TEST_FRONTEND_ORIGIN]);
  } finally {
    storage.destroy();
  }
  return settings;
}

/** The files app in-process, on the run's real S3 server, with a database and a bucket of the file's own. */
export async function startFiles(
  file: string,
  env: Record<string, string> = {},
  db?: TestDatabase,
): Promise<FilesHarness> {
  const database = db ?? (await openTestDatabase(file));
  const s3 = await bucketOf(file);
  const config = readConfig({
    JWT_SECRET: TEST_JWT_SECRET,
    MONGO_URL: database.url,
    S3_ENDPOINT: s3.endpoint,
    S3_ACCESS_KEY_ID: s3.accessKeyId,
    S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
    STORAGE_BUCKET: s3.bucket,
    STORAGE_REGION: s3.region,
    ...env,
  });
  const logs = captureLogger('files');
  const { app, uploads, sweeper, removals, storage, accounts } = await createApp({
    config,
    connection: database.connection,
    logger: logs.logger,
    tokens: verifierWithoutRevocations(),
    reach: overTheNetwork,
  });
  const bucket = new ObjectStorage(s3);
  return {
    app,
    http: api(app.callback()),
    model: uploadModel(database.connection),
    uploads,
    sweeper,
    removals,
    accounts,
    storage,
    bucket,
    db: database,
    logs,
    config,
    async close() {
      storage.destroy();
      bucket.destroy();
      if (!db) await database.drop();
    },
  };
}

export { type Caller, newCaller };

/** Asks for a link and really PUTs `bytes` to storage with the returned headers. */
export async function uploadFile(
  h: FilesHarness,
  caller: Caller,
  bytes: string | Uint8Array,
  contentType = 'text/plain',
  filename = 'file.txt',
) {
  const res = await h.http
    .post('/upload-url')
    .set(caller.auth)
    .send({ contentType, filename, size: Buffer.byteLength(bytes) });
  if (res.status !== 200) throw new Error(`upload-url answered ${res.status}: ${res.text}`);
  const put = await fetch(res.body.url, { method: 'PUT', headers: res.body.headers, body: bytes });
  if (put.status !== 200) throw new Error(`storage refused the PUT: ${put.status} ${await put.text()}`);
  return res.body.key as string;
}

/** A multipart upload of `bytes` in one part, its part really sent to storage, and completed: an unclaimed key. */
export async function uploadInOnePart(
  h: Pick<FilesHarness, 'http'>,
  caller: Caller,
  bytes: string,
  { contentType, filename }: { contentType: string; filename: string },
): Promise<{ uploadId: string; key: string }> {
  const created = await h.http
    .post('/multipart-uploads')
    .set(caller.auth)
    .send({ contentType, filename, size: Buffer.byteLength(bytes) })
    .expect(201);
  const { uploadId, key } = created.body as { uploadId: string; key: string };
  const signed = await h.http
    .post(`/multipart-uploads/${uploadId}/part-urls`)
    .set(caller.auth)
    .send({ partNumbers: [1] })
    .expect(200);
  const [part] = signed.body.parts as { url: string; headers: Record<string, string> }[];
  const sent = await fetch(part?.url ?? '', { method: 'PUT', headers: part?.headers, body: bytes });
  if (sent.status !== 200) throw new Error(`storage refused the part: ${sent.status} ${await sent.text()}`);
  await h.http.post(`/multipart-uploads/${uploadId}/complete`).set(caller.auth).expect(200);
  return { uploadId, key };
}
