import { ObjectStorage } from '@cs/storage';

/**
 * Creates the bucket and its CORS rule. Kept out of servers.ts so that the launcher, which imports
 * servers.ts and afterwards only waits, never loads the S3 client (about 20 MB): it runs this in a
 * child of its own (prepare-bucket.ts).
 */
export async function prepareBucket(settings: {
  endpoint: string;
  region: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  corsOrigins: readonly string[];
}): Promise<void> {
  const storage = new ObjectStorage(settings);
  try {
    await storage.ensureBucket(settings.corsOrigins);
  } finally {
    storage.destroy();
  }
}
