import { randomBytes } from 'node:crypto';
import { busClient, createEventBus, type EventBus } from '@cs/event-bus';
import type { Redis } from 'ioredis';

export interface TestEventBus {
  bus: EventBus;
  /** The stream no other test uses. */
  stream: string;
  redis: Redis;
  close(): void;
}

/** An event bus of a test's own: a stream of its own on the run's redis-server (TEST_REDIS_URL). */
export function testEventBus(): TestEventBus {
  const url = process.env.TEST_REDIS_URL;
  if (!url) throw new Error('TEST_REDIS_URL is not set: the tests run under jest, whose global setup starts Redis');
  const redis = busClient(url);
  const stream = `test:${randomBytes(6).toString('hex')}`;
  return { bus: createEventBus(redis, { stream }), stream, redis, close: () => redis.disconnect() };
}
