/**
 * One-shot: creates the bucket when missing and sets the CORS rule browsers need to PUT and GET
 * directly (FRONTEND_ORIGIN). Docker Compose runs it before the files service starts.
 */
import { configOrExit, env, loadConfig } from '@cs/config';
import { ObjectStorage } from '@cs/storage';

const spec = {
  S3_ENDPOINT: env.url(),
  S3_ACCESS_KEY_ID: env.string(),
  S3_SECRET_ACCESS_KEY: env.string(),
  STORAGE_BUCKET: env.string(),
  STORAGE_REGION: env.string('us-east-1'),
  FRONTEND_ORIGIN: env.list(),
};

async function main(): Promise<void> {
  // Through configOrExit, as every part's boot, so its keys may be given as files too (S3_SECRET_ACCESS_KEY_FILE).
  const config = configOrExit('setup-bucket', (source) => loadConfig(spec, source), process.env);
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
