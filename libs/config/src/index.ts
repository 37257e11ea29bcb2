/**
 * Typed, frozen configuration read from the environment. A process reads its environment only:
 * `.env` is the launcher's (`npm start` reads it and hands its values on), so a developer's file
 * never reaches a process that a test or a deployment starts.
 * A service declares a spec of readers; `loadConfig` runs them all and fails once, naming every
 * key that is missing or wrong, so a misconfigured process never starts half-working. Each key may
 * be given as a file instead (`X_FILE`, setting-files.ts), read as its key is.
 */

import { ConfigError } from './config-error';
import { present } from './present';
import { settingOf } from './setting-files';

export { ConfigError } from './config-error';
export { FILE_SUFFIX, settingOf } from './setting-files';

export type Env = Record<string, string | undefined>;
export type Reader<T> = (raw: string | undefined) => T;
export type Spec = Record<string, Reader<unknown>>;
export type ConfigOf<S extends Spec> = { readonly [K in keyof S]: ReturnType<S[K]> };

/** Thrown by a reader; loadConfig prefixes the key's name. */
class Problem extends Error {}

function required<T>(raw: string | undefined, fallback: T | undefined, parse: (raw: string) => T): T {
  if (present(raw)) return parse(raw.trim());
  if (fallback !== undefined) return fallback;
  throw new Problem('is required');
}

const DURATION = /^(\d+)\s*(ms|s|m|h|d)?$/;
const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** Milliseconds of a duration string such as `15m`, `1h`, `7d` or `3600` (seconds). */
export function parseDuration(text: string, { allowZero = false }: { allowZero?: boolean } = {}): number {
  const match = DURATION.exec(text.trim());
  if (!match) throw new Problem(`must be a duration such as 15m, 1h or 7d (got "${text}")`);
  const amount = Number(match[1]);
  const unit = (match[2] ?? 's') as keyof typeof UNIT_MS;
  const ms = amount * UNIT_MS[unit];
  if (allowZero && ms === 0) return 0;
  if (!Number.isSafeInteger(ms) || ms <= 0) throw new Problem('must be a positive duration');
  return ms;
}

export const env = {
  string:
    (fallback?: string): Reader<string> =>
    (raw) =>
      required(raw, fallback, (s) => s),

  /** A secret: required, never defaulted, at least `minLength` characters. */
  secret:
    (minLength: number): Reader<string> =>
    (raw) => {
      if (!present(raw)) throw new Problem('is required');
      if (raw.length < minLength) throw new Problem(`must be at least ${minLength} characters`);
      return raw;
    },

  int:
    (fallback: number | undefined, { min = 0, max = Number.MAX_SAFE_INTEGER } = {}): Reader<number> =>
    (raw) =>
      required(raw, fallback, (s) => {
        const n = Number(s);
        if (!/^-?\d+$/.test(s) || !Number.isSafeInteger(n) || n < min || n > max) {
          throw new Problem(`must be an integer from ${min} to ${max} (got "${s}")`);
        }
        return n;
      }),

  port: (fallback?: number): Reader<number> => env.int(fallback, { min: 0, max: 65_535 }),

  url:
    (fallback?: string): Reader<string> =>
    (raw) =>
      required(raw, fallback, (s) => {
        if (!URL.canParse(s)) throw new Problem(`must be a URL (got "${s}")`);
        return s.replace(/\/+$/, '');
      }),

  /** A duration kept as written (jsonwebtoken understands the same forms); validated here. */
  duration:
    (fallback?: string): Reader<string> =>
    (raw) =>
      required(raw, fallback, (s) => {
        parseDuration(s);
        return s;
      }),

  /** A duration read as milliseconds. */
  /** A duration (`500ms`, `15m`, `7d`) in ms; positive, or 0 too with `allowZero`. */
  durationMs:
    (fallback?: string, options?: { allowZero?: boolean }): Reader<number> =>
    (raw) =>
      parseDuration(
        required(raw, fallback, (s) => s),
        options,
      ),

  list:
    (fallback?: string[]): Reader<readonly string[]> =>
    (raw) =>
      Object.freeze(
        required(raw, fallback, (s) =>
          s
            .split(',')
            .map((item) => item.trim())
            .filter(Boolean),
        ),
      ),

  bool:
    (fallback?: boolean): Reader<boolean> =>
    (raw) =>
      required(raw, fallback, (s) => {
        if (/^(1|true|yes|on)$/i.test(s)) return true;
        if (/^(0|false|no|off)$/i.test(s)) return false;
        throw new Problem(`must be true or false (got "${s}")`);
      }),

  logLevel: (): Reader<(typeof LOG_LEVELS)[number]> => env.oneOf(LOG_LEVELS, 'info'),

  oneOf:
    <T extends string>(values: readonly T[], fallback?: T): Reader<T> =>
    (raw) =>
      required(raw, fallback, (s) => {
        if (!(values as readonly string[]).includes(s)) throw new Problem(`must be one of ${values.join(', ')}`);
        return s as T;
      }),
};

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'silent'] as const;

/**
 * The address a process listens on. Every interface by default, as a container needs; the dev
 * launcher binds the services to loopback, so on a shared machine only the gateway (with its
 * rate limits and token checks) can be reached from outside.
 */
export const hostSpec = {
  HOST: env.string('0.0.0.0'),
};

/**
 * Where a process serves its Prometheus metrics: a listener of its own, never the public port.
 * 0 (the default) turns metrics off. The host defaults to loopback; a deployment that scrapes
 * across hosts sets it to an address only its private network reaches.
 */
export const metricsSpec = {
  METRICS_PORT: env.port(0),
  METRICS_HOST: env.string('127.0.0.1'),
};

/** Keys every service that verifies tokens shares. */
export const jwtSpec = {
  JWT_SECRET: env.secret(32),
  JWT_EXPIRES_IN: env.duration('1h'),
};

/**
 * Writes of a service that run at once in one process (posts, notes); the rest wait their
 * account's turn (`@cs/koa` write-turns.ts). 0: one per core.
 */
export const writesSpec = {
  WRITE_CONCURRENCY: env.int(0, { min: 0, max: 256 }),
};

/** Where a service that is not identity reads the revocation log (@cs/auth's revocation feed). */
export const revocationsSpec = {
  IDENTITY_URL: env.url('http://127.0.0.1:4001'),
};

/**
 * What every part has, the gateway and each service: where it listens (`port` by default), where
 * its metrics are served, and how much it logs.
 */
export function partSpec(port: number) {
  return { PORT: env.port(port), ...hostSpec, ...metricsSpec, LOG_LEVEL: env.logLevel() };
}

/** What a service that checks tokens has besides (every service but identity, which keeps the log). */
export const tokenChecksSpec = { ...jwtSpec, ...revocationsSpec };

/**
 * A process's configuration: from process.env, or from `source` alone when a test gives one.
 */
export function readEnvConfig<S extends Spec>(spec: S, source: Env = process.env): ConfigOf<S> {
  return loadConfig(spec, source);
}

export function loadConfig<S extends Spec>(spec: S, source: Env): ConfigOf<S> {
  const problems: string[] = [];
  const out: Record<string, unknown> = {};
  for (const [key, read] of Object.entries(spec)) {
    try {
      out[key] = read(settingOf(source, key));
    } catch (err) {
      if (err instanceof ConfigError) problems.push(...err.problems);
      else if (err instanceof Problem) problems.push(`${key} ${err.message}`);
      else throw err;
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return Object.freeze(out) as ConfigOf<S>;
}

/**
 * Reads a process's configuration (a service's, the gateway's) from `source`; a bad one stops the
 * process, naming what it configures and every key that is wrong.
 */
export function configOrExit<C>(name: string, read: (source: NodeJS.ProcessEnv) => C, source: NodeJS.ProcessEnv): C {
  try {
    return read(source);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${name}: ${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
}
