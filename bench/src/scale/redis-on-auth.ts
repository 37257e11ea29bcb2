/**
 * Part 4 of the scale run, Redis on the auth route: the limit counted in Redis against in the
 * gateway's memory, and the check that every request was counted by the store in use.
 */
import type { RunningServer } from '@cs/devstack';
import { interleave, type Summary, summary, type Target } from './measured';
import { countedByHeader, redisCommand } from './redis';
import type { Routes } from './routes';
import { C } from './settings';

export async function redisOnAuth(
  direct: Target,
  withRedis: Target,
  redis: RunningServer,
  { at, warm }: Routes,
  say: (s: string) => void,
) {
  await warm(withRedis, 'login');
  const limits: Record<string, Record<string, Summary>> = {};
  const served = { memory: 0, redis: 0 };
  for (const connections of [C, 1]) {
    say(`rate limit in Redis, ${connections} connection(s)`);
    const rounds = await interleave([
      { name: 'memory', run: () => at(direct, 'login', connections) },
      { name: 'redis', run: () => at(withRedis, 'login', connections) },
    ]);
    limits[connections] = { memory: summary(rounds.memory ?? []), redis: summary(rounds.redis ?? []) };
    served.memory += limits[connections].memory?.requests ?? 0;
    served.redis += limits[connections].redis?.requests ?? 0;
  }
  // Every one of those requests passed the limiter: each was counted, by the store in use.
  const redisKeys = (await redisCommand(redis.port ?? 0, 'KEYS', 'rl:auth:*')).match(/rl:auth:[^\r\n]+/g) ?? [];
  let inRedis = 0;
  // A counter is a string: GET answers a bulk string, `$<length>\r\n<count>\r\n`.
  for (const key of redisKeys)
    inRedis += Number(/^\$\d+\r\n(\d+)\r\n/.exec(await redisCommand(redis.port ?? 0, 'GET', key))?.[1] ?? 0);
  const limiterCheck = {
    memory: { served: served.memory, counted: await countedByHeader(direct.url) },
    redis: { served: served.redis, counted: await countedByHeader(withRedis.url), inRedis, keys: redisKeys.length },
  };
  if (limiterCheck.memory.counted < served.memory || limiterCheck.redis.inRedis < served.redis)
    throw new Error(`the auth limit did not count every request: ${JSON.stringify(limiterCheck)}`);
  return { limits, limiterCheck };
}
