/** The Redis connections of the bus: a publisher's, and a reader's that waits for Redis as it starts. */
import { Redis as IORedis, type Redis } from 'ioredis';

/**
 * A Redis client for the bus whose commands fail at once while Redis is away (a publisher's
 * outbox tries again later; a reader's readiness says so), instead of queueing without bound.
 */
export function busClient(url: string): Redis {
  const redis = new IORedis(url, { maxRetriesPerRequest: 1, enableOfflineQueue: false });
  // Each failed command is reported to its caller; the client reconnects on its own.
  redis.on('error', () => undefined);
  return redis;
}

/**
 * A bus client once it is connected, for a reader that needs the bus before it can serve (the
 * realtime service reads the newest id as it starts). Redis not there yet (starting beside us)
 * is waited for, each failed attempt told to `onRetry`, for at most `startupTimeoutMs`.
 */
export async function connectBus(
  url: string,
  {
    startupTimeoutMs = 30_000,
    onRetry,
  }: { startupTimeoutMs?: number; onRetry?: (attempt: number, err: unknown) => void } = {},
): Promise<Redis> {
  const redis = busClient(url);
  let attempts = 0;
  const retried = (err: unknown) => onRetry?.(++attempts, err);
  redis.on('error', retried);
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`the bus at ${url} did not answer within ${startupTimeoutMs} ms`)),
        startupTimeoutMs,
      );
      redis.once('ready', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  } catch (err) {
    redis.disconnect();
    throw err;
  } finally {
    redis.off('error', retried);
  }
  return redis;
}
