import { availableParallelism } from 'node:os';
import { type ConfigOf, env, partSpec, readEnvConfig, tokenChecksSpec } from '@cs/config';
import { MAX_OBJECT_SIZE, MAX_PART_SIZE, MIN_PART_SIZE } from './multipart/multipart';

export const DEFAULT_ALLOWED_TYPES = [
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'application/pdf',
  'text/plain',
  'application/json',
  'application/zip',
];

export const configSpec = {
  ...tokenChecksSpec,
  ...partSpec(4004),
  MONGO_URL: env.url(),
  S3_ENDPOINT: env.url(),
  /** The address browsers use for storage; signed links carry it. */
  S3_PUBLIC_ENDPOINT: env.string(''),
  S3_ACCESS_KEY_ID: env.string(),
  S3_SECRET_ACCESS_KEY: env.string(),
  STORAGE_BUCKET: env.string(),
  STORAGE_REGION: env.string('us-east-1'),
  UPLOAD_ALLOWED_TYPES: env.list(DEFAULT_ALLOWED_TYPES),
  /** The largest file sent in one PUT (storage's own limit is 5 GiB). */
  UPLOAD_MAX_BYTES: env.int(25 * 1024 * 1024, { min: 1, max: 5 * 1024 ** 3 }),
  /** The largest file sent in parts (storage's own limit is 5 TiB). */
  UPLOAD_MAX_BYTES_MULTIPART: env.int(10 * 1024 ** 3, { min: 1, max: MAX_OBJECT_SIZE }),
  /** The part size asked of clients; raised for files that would need over 10,000 parts. */
  MULTIPART_PART_SIZE: env.int(8 * 1024 ** 2, { min: MIN_PART_SIZE, max: MAX_PART_SIZE }),
  UPLOAD_URL_TTL_S: env.int(300, { min: 1, max: 7 * 24 * 3600 }),
  /**
   * Size-less upload links (the contract's request) one caller may hold unexpired at once: each
   * can put up to storage's 5 GB until its key is checked (see sweeper.ts).
   */
  UPLOAD_MAX_OPEN_LINKS: env.int(50, { min: 1, max: 10_000 }),
  /** How long after a size-less link expires its key is checked: a PUT begun in time may still be arriving. */
  UPLOAD_CHECK_DELAY: env.durationMs('30s'),
  /** The notes service, told of an attachment whose object the check removed. */
  NOTES_URL: env.url('http://127.0.0.1:4003'),
  NOTES_TIMEOUT: env.durationMs('3s'),
  DOWNLOAD_URL_TTL_S: env.int(3600, { min: 1, max: 7 * 24 * 3600 }),
  /** Keys issued but not attached within this time are deleted by the sweeper. */
  UPLOAD_CLAIM_TTL: env.durationMs('24h'),
  SWEEP_INTERVAL: env.durationMs('1m'),
  /**
   * Uploads one account may hold not yet attached to a note: objects put through single-PUT links,
   * size-less links (each counted as UPLOAD_MAX_BYTES), and multipart uploads (their declared size).
   * The sweeper cuts an account back to both bounds at every pass, oldest first (unclaimed-budget.ts).
   */
  UPLOAD_MAX_UNCLAIMED: env.int(1000, { min: 1, max: 1_000_000 }),
  UPLOAD_MAX_UNCLAIMED_BYTES: env.int(20 * 1024 ** 3, { min: 1, max: 1024 ** 5 }),
  /** Multipart uploads one account may hold open (not completed, aborted or swept) at once. */
  UPLOAD_MAX_OPEN_MULTIPART: env.int(10, { min: 1, max: 10_000 }),
  /**
   * How long a released key's record is kept after its last link expired. Then the sweeper
   * deletes the key's object once more (a link still valid at the release could have put it
   * back) and removes the record.
   */
  RELEASED_RETENTION: env.durationMs('1h'),
  /**
   * Thumbnails of image attachments (thumbnails/): the sizes that may be asked for, in
   * PocketBase's syntax (thumb-size.ts, checked at boot); how many are made at once (each takes a
   * core while it is made); how long a request waits for one of those workers before 503; and the
   * largest image decoded, in pixels: a decompression bomb over it is refused with 422.
   */
  THUMB_SIZES: env.list(['100x100', '300x0', '800x0']),
  THUMB_WORKERS: env.int(availableParallelism(), { min: 1, max: 1024 }),
  THUMB_WAIT: env.durationMs('10s'),
  THUMB_MAX_PIXELS: env.int(40_000_000, { min: 1, max: 1_000_000_000 }),
};

export type Config = ConfigOf<typeof configSpec>;

/** The only reader of process.env here (through readEnvConfig); tests pass their own source. */
export function readConfig(source: NodeJS.ProcessEnv = process.env): Config {
  return readEnvConfig(configSpec, source);
}
