import { createServiceApp } from '@cs/koa';
import type { Logger } from '@cs/log';
import { type Connection, createTurns, isMongoReady } from '@cs/mongo';
import { ObjectStorage } from '@cs/storage';
import type { Config } from './config';
import { uploadModel } from './model';
import { internalRoutes, uploadRoutes } from './routes';
import { createUploads } from './uploads';

export interface Deps {
  config: Config;
  connection: Connection;
  logger: Logger;
}

export async function createApp({ config, connection, logger }: Deps) {
  const model = uploadModel(connection);
  await model.init();
  const turns = await createTurns(connection);
  const storage = new ObjectStorage({
    endpoint: config.S3_ENDPOINT,
    publicEndpoint: config.S3_PUBLIC_ENDPOINT || config.S3_ENDPOINT,
    region: config.STORAGE_REGION,
    bucket: config.STORAGE_BUCKET,
    accessKeyId: config.S3_ACCESS_KEY_ID,
    secretAccessKey: config.S3_SECRET_ACCESS_KEY,
  });
  const uploads = createUploads({
    model,
    storage,
    turns,
    logger,
    settings: {
      uploadTtlS: config.UPLOAD_URL_TTL_S,
      downloadTtlS: config.DOWNLOAD_URL_TTL_S,
      claimTtlMs: config.UPLOAD_CLAIM_TTL,
    },
  });
  const secret = config.JWT_SECRET;
  const app = createServiceApp({
    logger,
    routers: [
      uploadRoutes(uploads, {
        secret,
        rules: { allowedTypes: config.UPLOAD_ALLOWED_TYPES, maxBytes: config.UPLOAD_MAX_BYTES },
      }),
      internalRoutes(uploads, { secret }),
    ],
    readiness: { database: () => isMongoReady(connection), storage: () => storage.bucketReady() },
  });
  return { app, uploads, storage, turns };
}

/** Runs the sweeper every `intervalMs`; a pass never overlaps the previous one. */
export function startSweeper(uploads: ReturnType<typeof createUploads>, intervalMs: number, logger: Logger) {
  let running: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    running = running.then(() =>
      uploads.sweep().then(
        (released) => released > 0 && logger.info({ released }, 'sweeper released uploads'),
        (err: unknown) => logger.warn({ err }, 'sweeper pass failed'),
      ),
    );
  }, intervalMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}
