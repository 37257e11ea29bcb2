import { type ConfigOf, env, partSpec, readEnvConfig } from '@cs/config';

export const configSpec = {
  ...partSpec(3000),
  JWT_SECRET: env.secret(32),
  IDENTITY_URL: env.url('http://127.0.0.1:4001'),
  POSTS_URL: env.url('http://127.0.0.1:4002'),
  NOTES_URL: env.url('http://127.0.0.1:4003'),
  FILES_URL: env.url('http://127.0.0.1:4004'),
  /** The realtime service: the streams of change events (GET /api/realtime). */
  REALTIME_URL: env.url('http://127.0.0.1:4005'),
  /** Origins allowed by CORS, comma-separated; defaults to the gateway's own. */
  FRONTEND_ORIGIN: env.list([]),
  /** Requests a minute per client IP on /api/auth/* and on everything else; 0 turns a limit off. */
  AUTH_RATE_LIMIT: env.int(10),
  RATE_LIMIT: env.int(600),
  RATE_WINDOW: env.durationMs('1m'),
  /**
   * Where the rate limits count, shared by every gateway (`redis://host:6379`). Unset: each
   * gateway counts in its own memory, which is right for one gateway only.
   */
  REDIS_URL: env.string(''),
  /**
   * Express's `trust proxy`: `false` (clients connect to us directly), a number of proxy hops, or
   * a comma-separated list of trusted proxy addresses. Behind a load balancer it must be set, or
   * every client shares the balancer's IP and one rate-limit bucket.
   */
  TRUST_PROXY: env.string('false'),
  /**
   * Connections one client address may hold at once (0: no cap). Sized for an office behind one
   * address: each person's browser holds a live-updates stream and a few connections of its own.
   * Not applied to a trusted proxy's connections (TRUST_PROXY): the balancer caps per client.
   */
  CONNECTIONS_PER_ADDRESS: env.int(256),
  /**
   * Connections the gateway holds in all. 0: what the process's open-files limit leaves once the
   * upstream pools and a reserve have theirs (see connection-limits.ts).
   */
  MAX_CONNECTIONS: env.int(0),
  /** How long an upstream may take to answer before the gateway gives 504. */
  UPSTREAM_TIMEOUT: env.durationMs('15s'),
  /**
   * How long a realtime stream may send nothing before the gateway ends it: its own, as a stream
   * is long-lived. Above realtime's keepalive (REALTIME_KEEPALIVE, 10 s).
   */
  STREAM_TIMEOUT: env.durationMs('30s'),
  /**
   * How long a refused connection to an upstream is retried before 502 (a restarting service is
   * back on its port within it).
   */
  UPSTREAM_RETRY_WINDOW: env.durationMs('3s'),
  BODY_LIMIT_BYTES: env.int(100 * 1024, { min: 1 }),
  /**
   * Whether the services' `Server-Timing` header (how long the database part of a read took)
   * reaches clients. Off by default: it tells anyone how long our queries take, which helps an
   * attacker time them. The benchmark turns it on to split a request's time.
   */
  SERVER_TIMING: env.bool(false),
  /**
   * Whether a write to posts, notes or files needs a verified e-mail address: off, an unverified
   * account writes as ever; on, it can log in and read, and every such write is 403 until it
   * verifies (verified-email.ts asks identity, and remembers who is verified).
   */
  REQUIRE_VERIFIED_EMAIL: env.bool(false),
};

export type Config = ConfigOf<typeof configSpec>;

/** The only reader of process.env here (through readEnvConfig); tests pass their own source. */
export function readConfig(source: NodeJS.ProcessEnv = process.env): Config {
  return readEnvConfig(configSpec, source);
}

export function trustProxySetting(value: string): boolean | number | string[] {
  if (/^(false|0|)$/i.test(value)) return false;
  if (/^true$/i.test(value)) return true;
  if (/^\d+$/.test(value)) return Number(value);
  return value.split(',').map((s) => s.trim());
}
