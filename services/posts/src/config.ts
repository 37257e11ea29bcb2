import { type ConfigOf, env, partSpec, readEnvConfig, tokenChecksSpec, writesSpec } from '@cs/config';

export const configSpec = {
  ...tokenChecksSpec,
  ...partSpec(4002),
  ...writesSpec,
  MONGO_URL: env.url(),
  /** The event bus (Redis Streams) the realtime service reads. */
  REDIS_URL: env.url('redis://127.0.0.1:6379'),
  /** How often change events no live process sent are looked for (the outbox's fallback). */
  EVENTS_INTERVAL: env.durationMs('5s'),
  /**
   * Changes to published posts past their first publish (unpublish, publish again, edit) one
   * account may make a minute, per replica; then 429 (public-changes.ts). 0: no limit.
   */
  PUBLIC_CHANGES_PER_MINUTE: env.int(60, { min: 0 }),
  /** Public list pages computed from the database at once (the rest wait their client's turn). */
  LIST_COLD_CONCURRENCY: env.int(2, { min: 1, max: 64 }),
};

export type Config = ConfigOf<typeof configSpec>;

/** The only reader of process.env here (through readEnvConfig); tests pass their own source. */
export function readConfig(source: NodeJS.ProcessEnv = process.env): Config {
  return readEnvConfig(configSpec, source);
}
