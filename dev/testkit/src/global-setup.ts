/**
 * Jest global setup: makes sure a MongoDB-protocol server, an S3 server, an SMTP server, a
 * Redis (the event bus; always ours) and an OpenID Connect provider (always ours, in test mode)
 * run for this test run, and passes their addresses to every worker through the environment. External
 * servers given by MONGO_URL / S3_ENDPOINT / SMTP_URL (with MAIL_API_URL to read mail back) are
 * used as they are; otherwise ours are started under .data/.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import {
  ensureTools,
  prepareBucket,
  REPO_ROOT,
  type RunningServer,
  startMail,
  startMongo,
  startOidcProvider,
  startRedis,
  startStorage,
} from '@cs/devstack';
import {
  TEST_FRONTEND_ORIGIN,
  TEST_OIDC_CLIENT,
  TEST_OIDC_OTHER_CLIENT,
  TEST_S3,
  testOidcRedirects,
} from './constants';

interface Infra {
  servers: RunningServer[];
  dataDir: string;
}

const KEY = '__contentServiceTestInfra__';

export default async function globalSetup(): Promise<void> {
  const dataDir = join(REPO_ROOT, '.data', `test-${process.pid}`);
  mkdirSync(dataDir, { recursive: true });
  if (!process.env.MONGO_URL || !process.env.S3_ENDPOINT || !process.env.SMTP_URL) ensureTools();

  const s3 = {
    accessKeyId: process.env.S3_ACCESS_KEY_ID ?? TEST_S3.accessKeyId,
    secretAccessKey: process.env.S3_SECRET_ACCESS_KEY ?? TEST_S3.secretAccessKey,
    region: process.env.STORAGE_REGION ?? TEST_S3.region,
    bucket: process.env.STORAGE_BUCKET ?? TEST_S3.bucket,
  };
  // Each OpenID Connect client of the provider, with the callbacks of ours (constants.ts).
  const oidcClients = [TEST_OIDC_CLIENT, TEST_OIDC_OTHER_CLIENT].map(({ id, secret }) => ({
    client_id: id,
    client_secret: secret,
    redirect_uris: testOidcRedirects(),
    application_type: 'native' as const,
  }));
  const [mongo, storage, mail, redis, oidc] = await Promise.all([
    startMongo({ dataDir }),
    startStorage({ dataDir, ...s3 }),
    startMail({ dataDir }),
    startRedis({ dataDir }),
    startOidcProvider({ dataDir, mode: 'test', clients: oidcClients }),
  ]);
  await prepareBucket({ endpoint: storage.url, ...s3, corsOrigins: [TEST_FRONTEND_ORIGIN] });

  Object.assign(process.env, {
    MONGO_URL: mongo.url,
    S3_ENDPOINT: storage.url,
    S3_ACCESS_KEY_ID: s3.accessKeyId,
    S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
    STORAGE_REGION: s3.region,
    STORAGE_BUCKET: s3.bucket,
    TEST_DATA_DIR: dataDir,
    TEST_MONGO_KIND: mongo.kind,
    TEST_STORAGE_KIND: storage.kind,
    SMTP_URL: mail.url,
    TEST_MAIL_KIND: mail.kind,
    // The event bus's. Not REDIS_URL: a gateway a test starts would count its limits there.
    TEST_REDIS_URL: redis.url,
    // The OpenID Connect provider, in test mode: its login page says whether it vouches for an address.
    TEST_OIDC_ISSUER: oidc.url,
  });
  // Only when known: an undefined would reach the workers as the string "undefined".
  if (mail.apiUrl) process.env.MAIL_API_URL = mail.apiUrl;
  process.stdout.write(`\ntest servers: MongoDB protocol = ${mongo.kind}, S3 = ${storage.kind}, SMTP = ${mail.kind}\n`);
  (globalThis as Record<string, unknown>)[KEY] = {
    servers: [mongo, storage, mail, redis, oidc],
    dataDir,
  } satisfies Infra;
}

export async function globalTeardown(): Promise<void> {
  const infra = (globalThis as Record<string, unknown>)[KEY] as Infra | undefined;
  if (!infra) return;
  await Promise.all(infra.servers.map((s) => s.stop()));
  if (!process.env.KEEP_TEST_DATA) rmSync(infra.dataDir, { recursive: true, force: true });
}
