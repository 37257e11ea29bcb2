import { type ConfigOf, env, partSpec, readEnvConfig, tokenChecksSpec, writesSpec } from '@cs/config';

export const configSpec = {
  ...tokenChecksSpec,
  ...partSpec(4003),
  ...writesSpec,
  MONGO_URL: env.url(),
  FILES_URL: env.url('http://127.0.0.1:4004'),
  /** How long a call to the files service may take before the operation answers 503. */
  FILES_TIMEOUT: env.durationMs('3s'),
  /** How long a thumbnail link may take: files waits up to 10 s for a worker, then makes the thumbnail. */
  FILES_THUMBNAIL_TIMEOUT: env.durationMs('30s'),
  /**
   * How long a claim or a download link that could not reach files is sent again (files
   * restarting, or its container being replaced) before the operation answers 503.
   */
  FILES_RETRY_WINDOW: env.durationMs('3s'),
  /** How often pending releases (the outbox) are retried. */
  OUTBOX_INTERVAL: env.durationMs('5s'),
  /** The event bus (Redis Streams) the realtime service reads. */
  REDIS_URL: env.url('redis://127.0.0.1:6379'),
  /** How often change events no live process sent are looked for (the outbox's fallback). */
  EVENTS_INTERVAL: env.durationMs('5s'),
};

export type Config = ConfigOf<typeof configSpec>;

/** The only reader of process.env here (through readEnvConfig); tests pass their own source. */
export function readConfig(source: NodeJS.ProcessEnv = process.env): Config {
  return readEnvConfig(configSpec, source);
}
