/**
 * One-shot: creates the bucket when missing and sets the CORS rule browsers need to PUT and GET
 * directly (FRONTEND_ORIGIN). Docker Compose runs it before the files service starts.
 */
import { env, loadConfig } from '@cs/config';
import { ObjectStorage } from '@cs/storage';

async function main(): Promise<void> {
  const config = loadConfig(
    {
      S3_ENDPOINT: env.url(),
      S3_ACCESS_KEY_ID: env.string(),
      S3_SECRET_ACCESS_KEY: env.string(),
      STORAGE_BUCKET: env.string(),
      STORAGE_REGION: env.string('us-east-1'),
      FRONTEND_ORIGIN: env.list(),
    },
    process.env,
  );
  const storage = new ObjectStorage({
    endpoint: config.S3_ENDPOINT,
    region: config.STORAGE_REGION,
    bucket: config.STORAGE_BUCKET,
    accessKeyId: config.S3_ACCESS_KEY_ID,
    secretAccessKey: config.S3_SECRET_ACCESS_KEY,
  });
  try {
    await storage.ensureBucket(config.FRONTEND_ORIGIN);
    console.log(`bucket ${config.STORAGE_BUCKET} ready; CORS allows ${config.FRONTEND_ORIGIN.join(', ')}`);
  } finally {
    storage.destroy();
  }
}

main().catch((err: unknown) => {
  console.error(`setup-bucket: ${(err as Error).message}`);
  process.exit(1);
});
