import { type ConfigOf, env, partSpec, readEnvConfig, tokenChecksSpec } from '@cs/config';

export const configSpec = {
  ...tokenChecksSpec,
  ...partSpec(4005),
  /** The bus (Redis Streams) the services publish to, and where stream tickets are kept. */
  REDIS_URL: env.url('redis://127.0.0.1:6379'),
  /** A comment line this often on every stream: under every idle timeout on the way. */
  REALTIME_KEEPALIVE: env.durationMs('10s'),
  /** A client resumes (Last-Event-ID) without loss while its id is this recent... */
  REALTIME_RETENTION: env.durationMs('15m'),
  /** ...or among this many newest events, whichever keeps more... */
  REALTIME_RETENTION_EVENTS: env.int(20_000, { min: 1 }),
  /** ...and never more than this many bytes of events in all (Redis's memory). */
  REALTIME_RETENTION_BYTES: env.int(64 * 1_048_576, { min: 65_536 }),
  /** A stream whose client reads slower than this much piles up is cut (it resumes). */
  REALTIME_MAX_BUFFERED: env.int(1_048_576, { min: 1_024 }),
  /** What all the streams of this process may hold for their clients together; past it the slowest are cut. */
  REALTIME_BUFFER_BUDGET: env.int(64 * 1_048_576, { min: 65_536 }),
  /** A stream with bytes waiting whose socket takes nothing this long is cut. */
  REALTIME_STALL_TIMEOUT: env.durationMs('30s'),
  /** The share of the heap's limit in use (percent) past which streams are shed. */
  REALTIME_SHED_AT_HEAP_PERCENT: env.int(80, { min: 10, max: 99 }),
  /** Streams one account may hold open at once (per process); past it, 429 with Retry-After. */
  REALTIME_STREAMS_PER_ACCOUNT: env.int(20, { min: 1 }),
};

export type Config = ConfigOf<typeof configSpec>;

/** The only reader of process.env here (through readEnvConfig); tests pass their own source. */
export function readConfig(source: NodeJS.ProcessEnv = process.env): Config {
  return readEnvConfig(configSpec, source);
}
