import { type ConfigOf, env, hostSpec, jwtSpec, readEnvConfig } from '@cs/config';

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
  ...jwtSpec,
  PORT: env.port(4004),
  ...hostSpec,
  MONGO_URL: env.url(),
  LOG_LEVEL: env.logLevel(),
  S3_ENDPOINT: env.url(),
  /** The address browsers use for storage; signed links carry it. */
  S3_PUBLIC_ENDPOINT: env.string(''),
  S3_ACCESS_KEY_ID: env.string(),
  S3_SECRET_ACCESS_KEY: env.string(),
  STORAGE_BUCKET: env.string(),
  STORAGE_REGION: env.string('us-east-1'),
  UPLOAD_ALLOWED_TYPES: env.list(DEFAULT_ALLOWED_TYPES),
  UPLOAD_MAX_BYTES: env.int(25 * 1024 * 1024, { min: 1, max: 5 * 1024 ** 3 }),
  UPLOAD_URL_TTL_S: env.int(300, { min: 1, max: 7 * 24 * 3600 }),
  DOWNLOAD_URL_TTL_S: env.int(3600, { min: 1, max: 7 * 24 * 3600 }),
  /** Keys issued but not attached within this time are deleted by the sweeper. */
  UPLOAD_CLAIM_TTL: env.durationMs('24h'),
  SWEEP_INTERVAL: env.durationMs('1m'),
};

export type Config = ConfigOf<typeof configSpec>;

/** The only reader of process.env here (through readEnvConfig); tests pass their own source. */
export function readConfig(source: NodeJS.ProcessEnv = process.env): Config {
  return readEnvConfig(configSpec, source);
}
