import { type ConfigOf, env, hostSpec, jwtSpec, metricsSpec, readEnvConfig, revocationsSpec } from '@cs/config';

export const configSpec = {
  ...jwtSpec,
  ...revocationsSpec,
  PORT: env.port(4002),
  ...hostSpec,
  ...metricsSpec,
  MONGO_URL: env.url(),
  LOG_LEVEL: env.logLevel(),
  /** Public list pages computed from the database at once (the rest wait their client's turn). */
  LIST_COLD_CONCURRENCY: env.int(2, { min: 1, max: 64 }),
};

export type Config = ConfigOf<typeof configSpec>;

/** The only reader of process.env here (through readEnvConfig); tests pass their own source. */
export function readConfig(source: NodeJS.ProcessEnv = process.env): Config {
  return readEnvConfig(configSpec, source);
}
