/** The knobs of `npm run bench` (see run.ts), read once. */
import { s3Settings } from './bench-settings';

export { DIST, DURATION_S, NODE, OUT, ROUNDS, SECRET } from './bench-settings';

export const SOAK_S = Number(process.env.BENCH_SOAK_S ?? 60);
export const SIZES = (process.env.BENCH_SIZES ?? '1000,10000').split(',').map(Number);
/** Scenario 10's sizes, after its near-empty measurement: how many posts are stored. */
export const VOLUMES = (process.env.BENCH_VOLUMES ?? '10000,50000').split(',').map(Number);
/** How often scenario 10's writer changes a published post while the list is read. */
export const CHANGE_EVERY_MS = 1000;
/** The file of the multipart scenario, and its rounds (each round sends it twice). */
export const MULTIPART_MB = Number(process.env.BENCH_MULTIPART_MB ?? 1024);
export const MULTIPART_ROUNDS = Number(process.env.BENCH_MULTIPART_ROUNDS ?? 3);
/** The observability goals are within 3%: more rounds for their medians. */
export const OBSERVED_ROUNDS = Number(process.env.BENCH_OBSERVED_ROUNDS ?? 7);
/**
 * Each of its systems' warm-up, per read. A process's CPU per request kept falling for about 20 s
 * of its own load (notes: 830 → 490 µs a request), so a shorter one measured how warm a system
 * was, not what it was doing.
 */
export const OBSERVED_WARMUP_S = Number(process.env.BENCH_OBSERVED_WARMUP_S ?? 15);
/** The files service's default part size (MULTIPART_PART_SIZE), and the web client's concurrency. */
export const PART_SIZE = 8 * 1024 * 1024;
export const PART_CONCURRENCY = 4;
/** The contract's cost; the smoke test lowers it, or half a second of load would see no login. */
export const BCRYPT_COST = process.env.BENCH_BCRYPT_COST ?? '12';
/** Scenario 14: the posts on each system, and the restarts of each for the time to ready. */
export const PB_POSTS = Number(process.env.BENCH_PB_POSTS ?? 10_000);
export const PB_STARTS = Number(process.env.BENCH_PB_STARTS ?? 3);
/** The search benchmark's sizes, in posts, in order: each adds posts to the one before. */
export const SEARCH_SIZES = (process.env.BENCH_SEARCH_SIZES ?? '10000,100000').split(',').map(Number);
/** Our own versitygw's credentials, or those of the S3 server named by S3_ENDPOINT. */
export const S3 = s3Settings('content-bench');
/** Every scenario's clients, unless it says otherwise. */
export const CONNECTIONS = 10;
