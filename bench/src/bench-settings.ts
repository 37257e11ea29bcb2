/**
 * What the entries of `npm run bench` and `npm run bench:scale` share: their rounds and durations
 * (BENCH_ROUNDS, BENCH_DURATION_S), where they write (BENCH_OUT), the node and the built scripts
 * their measures run, the systems' secret, and the S3 server's credentials.
 */
import { join } from 'node:path';
import { REPO_ROOT } from '@cs/devstack';

export const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
export const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 4);
export const OUT = process.env.BENCH_OUT ?? join(REPO_ROOT, 'bench', 'results');
export const NODE = process.execPath;
export const DIST = join(REPO_ROOT, 'bench', 'dist', 'src');
export const SECRET = `bench-secret-${'x'.repeat(40)}`;

/** Our own versitygw's credentials, or those of the S3 server named by S3_ENDPOINT, and the bucket. */
export function s3Settings(bucket: string) {
  return {
    accessKeyId: process.env.S3_ACCESS_KEY_ID ?? 'benchaccess',
    secretAccessKey: process.env.S3_SECRET_ACCESS_KEY ?? 'benchsecret-benchsecret',
    region: process.env.STORAGE_REGION ?? 'us-east-1',
    bucket,
  };
}
