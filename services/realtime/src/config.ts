import { type ConfigOf, env, hostSpec, jwtSpec, metricsSpec, readEnvConfig, revocationsSpec } from '@cs/config';

export const configSpec = {
  ...jwtSpec,
  ...revocationsSpec,
  PORT: env.port(4005),
  ...hostSpec,
  ...metricsSpec,
  LOG_LEVEL: env.logLevel(),
  /** The bus (Redis Streams) the services publish to, and where stream tickets are kept. */
  REDIS_URL: env.url('redis://127.0.0.1:6379'),
  /** A comment line this often on every stream: under every idle timeout on the way. */
  REALTIME_KEEPALIVE: env.durationMs('10s'),
  /** A client resumes (Last-Event-ID) without loss while its id is this recent... */
  REALTIME_RETENTION: env.durationMs('15m'),
  /** ...or among this many newest events, whichever keeps more. */
  REALTIME_RETENTION_EVENTS: env.int(20_000, { min: 1 }),
  /** A stream whose client reads slower than this much piles up is ended (it resumes). */
  REALTIME_MAX_BUFFERED: env.int(1_048_576, { min: 1_024 }),
};

export type Config = ConfigOf<typeof configSpec>;

/** The only reader of process.env here (through readEnvConfig); tests pass their own source. */
export function readConfig(source: NodeJS.ProcessEnv = process.env): Config {
  return readEnvConfig(configSpec, source);
}
