/** The knobs of `npm run bench:scale` (see scale.ts), read once, and what its systems are given. */
import { cpus } from 'node:os';
import { s3Settings } from '../bench-settings';

export { DIST, DURATION_S, NODE, OUT, ROUNDS, SECRET } from '../bench-settings';

/** A new process runs slower until V8 has compiled its hot paths: each system is loaded first. */
export const WARMUP_S = Number(process.env.BENCH_WARMUP_S ?? 5);
export const C = Number(process.env.BENCH_CONNECTIONS ?? 16);
export const REPLICAS = Number(process.env.BENCH_REPLICAS ?? 2);
export const CORES = cpus().length;
export const S3 = s3Settings('content-bench-scale');
/** Far above anything the run sends, so that no request is refused, yet every one is counted. */
export const AUTH_LIMIT = 1_000_000_000;
export const NODE_KINDS = ['gateway', 'identity', 'posts', 'notes', 'files'] as const;
/** The groups of the CPU tables, in order. */
export const TIERS = [
  'gateway',
  'posts',
  'identity, notes, files',
  'haproxy',
  'redis',
  'ferretdb',
  'postgres',
] as const;
