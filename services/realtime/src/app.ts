import type { TokenVerifier } from '@cs/auth';
import { createEventBus } from '@cs/event-bus';
import { createServiceApp } from '@cs/koa';
import type { Logger } from '@cs/log';
import type { Redis } from 'ioredis';
import type { Config } from './config';
import { createHub } from './hub';
import { realtimeRoutes } from './routes';
import { createTickets } from './tickets';

export interface Deps {
  config: Pick<
    Config,
    'REALTIME_KEEPALIVE' | 'REALTIME_RETENTION' | 'REALTIME_RETENTION_EVENTS' | 'REALTIME_MAX_BUFFERED'
  >;
  redis: Redis;
  logger: Logger;
  /** How tokens are verified: the signature, and the revocation list that follows identity's log. */
  tokens: TokenVerifier;
}

/** How often the bus drops what its retention no longer needs. */
const TRIM_EVERY_MS = 10_000;

export async function createApp({ config, redis, logger, tokens }: Deps) {
  const bus = createEventBus(redis, {
    retention: { keepMs: config.REALTIME_RETENTION, keepEvents: config.REALTIME_RETENTION_EVENTS },
  });
  const hub = createHub(bus, logger);
  await hub.start();
  const routes = realtimeRoutes({
    hub,
    tickets: createTickets(redis),
    tokens,
    stream: { keepaliveMs: config.REALTIME_KEEPALIVE, maxBufferedBytes: config.REALTIME_MAX_BUFFERED },
  });
  // Every replica trims; trimming twice drops nothing more.
  const trimming = setInterval(() => {
    bus.trim().catch((err: unknown) => logger.warn({ err: String(err) }, 'realtime: could not trim the bus'));
  }, TRIM_EVERY_MS);
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
    },
  };
}
