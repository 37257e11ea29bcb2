/**
 * Rate limits counted in Redis, so that every gateway behind a balancer counts the same requests:
 * with counts in each gateway's memory, N gateways let a client through N times the limit.
 *
 * The counting itself is rate-limit-redis (one Lua script per hit, atomic in Redis); the client is
 * ioredis. What this module decides is what a Redis outage does:
 * - the general limit **fails open**: a request is let through uncounted, because refusing every
 *   read of the API while Redis is away would turn a counter's outage into ours;
 * - the auth limit **fails closed**: register, login and password reset answer a JSON 503, because
 *   those are what a password-guessing client aims at, and uncounted they would have no limit.
 * Neither ever waits long or becomes a 500: commands are not queued while Redis is away, and one
 * in flight gives up after COMMAND_TIMEOUT_MS. The client reconnects by itself, and counting
 * resumes without a restart.
 */
import { createHash } from 'node:crypto';
import type { Logger } from '@cs/log';
import type { ClientRateLimitInfo, IncrementResponse, Options, Store } from 'express-rate-limit';
import { Redis } from 'ioredis';
import { type RedisReply, RedisStore, type SendCommandFn } from 'rate-limit-redis';

/** A command to a Redis that answers nothing (paused, or a network gone silent) fails after this. */
const COMMAND_TIMEOUT_MS = 300;
/** Reconnecting: after 50 ms, then more slowly, and never more than a second apart. */
const reconnectDelay = (attempt: number) => Math.min(attempt * 50, 1000);

export type OnOutage = 'fail-open' | 'fail-closed';

export class LimitStoreUnavailable extends Error {
  constructor(cause: unknown) {
    super('The rate-limit store (Redis) is unavailable', { cause });
  }
}

export interface SharedLimits {
  store(name: string, onOutage: OnOutage): Store;
  close(): Promise<void>;
}

export function createSharedLimits(redisUrl: string, logger: Logger): SharedLimits {
  const redis = new Redis(redisUrl, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: COMMAND_TIMEOUT_MS,
    connectTimeout: 1000,
    retryStrategy: reconnectDelay,
  });
  // One line when Redis goes away and one when it is back, not one per request or reconnect.
  let available = true;
  redis.on('error', (err: Error) => {
    if (!available) return;
    available = false;
    logger.warn({ err: err.message }, 'rate-limit store (Redis) unavailable: auth limit refusing, other limits open');
  });
  redis.on('ready', () => {
    if (available) return;
    available = true;
    logger.info('rate-limit store (Redis) available again');
  });

  /**
   * rate-limit-redis loads its scripts once, at start, and keeps the SHA1 it got. Were Redis away
   * then, or merely not connected yet (commands are not queued), it would keep a failed load
   * forever: every limit then failed, Redis up or not. A script's SHA1 is by definition the SHA1
   * of its text, so when the load fails the SHA1 is computed here instead; once Redis is back,
   * EVALSHA answers NOSCRIPT and the library loads the script again, as after any Redis restart.
   */
  const sendCommand: SendCommandFn = async (command = '', ...args) => {
    const reply = async () => (await redis.call(command, ...args)) as RedisReply;
    const script = args[1];
    if (command === 'SCRIPT' && args[0] === 'LOAD' && script !== undefined) {
      return reply().catch(() => createHash('sha1').update(script).digest('hex'));
    }
    return reply();
  };

  return {
    store(name, onOutage) {
      return new OutageAwareStore(new RedisStore({ prefix: `rl:${name}:`, sendCommand }), onOutage);
    },
    async close() {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}

/** rate-limit-redis's store, with a Redis outage turned into the limit's decision (above). */
class OutageAwareStore implements Store {
  readonly localKeys = false;
  readonly prefix: string;

  constructor(
    private readonly inner: RedisStore,
    private readonly onOutage: OnOutage,
  ) {
    this.prefix = inner.prefix;
  }

  async init(options: Options): Promise<void> {
    await this.inner.init(options);
  }

  async get(key: string): Promise<ClientRateLimitInfo | undefined> {
    return this.inner.get(key).catch((err) => this.outage(err, undefined));
  }

  async increment(key: string): Promise<IncrementResponse> {
    return this.inner.increment(key).catch((err) => this.outage(err, { totalHits: 0, resetTime: undefined }));
  }

  async decrement(key: string): Promise<void> {
    await this.inner.decrement(key).catch(() => {});
  }

  async resetKey(key: string): Promise<void> {
    await this.inner.resetKey(key).catch((err) => this.outage(err, undefined));
  }

  /** Open: the answer that lets the request through uncounted. Closed: an error, answered 503. */
  private outage<T>(err: unknown, open: T): T {
    if (this.onOutage === 'fail-open') return open;
    throw new LimitStoreUnavailable(err);
  }
}
