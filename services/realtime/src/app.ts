import type { TokenVerifier } from '@cs/auth';
import type { LiveEvent } from '@cs/contract';
import { createEventBus } from '@cs/event-bus';
import { createServiceApp } from '@cs/koa';
import type { Logger } from '@cs/log';
import type { Redis } from 'ioredis';
import type { Config } from './config';
import { createHub } from './hub';
import { createKeepalives } from './keepalives';
import { streamsCut } from './metrics';
import { realtimeRoutes } from './routes';
import { createStreamBudget } from './stream-budget';
import { createTickets } from './tickets';

export interface Deps {
  config: Pick<
    Config,
    | 'REALTIME_KEEPALIVE'
    | 'REALTIME_RETENTION'
    | 'REALTIME_RETENTION_EVENTS'
    | 'REALTIME_RETENTION_BYTES'
    | 'REALTIME_MAX_BUFFERED'
    | 'REALTIME_BUFFER_BUDGET'
    | 'REALTIME_STALL_TIMEOUT'
    | 'REALTIME_SHED_AT_HEAP_PERCENT'
    | 'REALTIME_STREAMS_PER_ACCOUNT'
  >;
  redis: Redis;
  logger: Logger;
  /** How tokens are verified: the signature, and the revocation list that follows identity's log. */
  tokens: TokenVerifier;
}

/** How often the bus drops what its retention no longer needs. */
const TRIM_EVERY_MS = 10_000;

export async function createApp({ config, redis, logger, tokens }: Deps) {
  const bus = createEventBus<LiveEvent>(redis, {
    retention: {
      keepMs: config.REALTIME_RETENTION,
      keepEvents: config.REALTIME_RETENTION_EVENTS,
      keepBytes: config.REALTIME_RETENTION_BYTES,
    },
  });
  const budget = createStreamBudget({
    maxBytes: config.REALTIME_BUFFER_BUDGET,
    stallMs: config.REALTIME_STALL_TIMEOUT,
    shedAtHeapPercent: config.REALTIME_SHED_AT_HEAP_PERCENT,
    onCut: (reason) => streamsCut.inc({ reason }),
  });
  const keepalives = createKeepalives(config.REALTIME_KEEPALIVE);
  const hub = createHub(bus, budget, logger);
  await hub.start();
  const routes = realtimeRoutes({
    hub,
    tickets: createTickets(redis),
    tokens,
    stream: { keepalives, maxBufferedBytes: config.REALTIME_MAX_BUFFERED },
    streamsPerAccount: config.REALTIME_STREAMS_PER_ACCOUNT,
  });
  // Every replica trims; trimming twice drops nothing more. The first trim also tells the
  // publishers the bytes the bus may hold.
  const trim = () =>
    bus.trim().catch((err: unknown) => logger.warn({ err: String(err) }, 'realtime: could not trim the bus'));
  void trim();
  const trimming = setInterval(trim, TRIM_EVERY_MS);
  trimming.unref();
  const app = createServiceApp({
    name: 'realtime',
    logger,
    routers: [routes.router],
    readiness: { bus: async () => (await redis.ping()) === 'PONG' },
    tokens,
  });
  return {
    app,
    stop() {
      clearInterval(trimming);
      routes.stop();
      hub.stop();
      budget.stop();
      keepalives.stop();
    },
  };
}
