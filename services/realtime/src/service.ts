import { connectBus } from '@cs/event-bus';
import { SERVICE_KEEP_ALIVE_TIMEOUT_MS } from '@cs/lifecycle';
import type { PartDefinition } from '@cs/service';
import { createApp } from './app';
import { type Config, readConfig } from './config';

/** Realtime: its configuration, and what it starts and stops around its app. */
export const realtimeService: PartDefinition<Config> = {
  name: 'realtime',
  readConfig,
  keepAliveTimeoutMs: SERVICE_KEEP_ALIVE_TIMEOUT_MS,
  build: async ({ config, logger, tokens }) => {
    const redis = await connectBus(config.REDIS_URL, {
      onRetry: (attempt, err) => logger.warn({ attempt, err: String(err) }, 'the bus is not reachable yet; retrying'),
    });
    const realtime = await createApp({ config, redis, logger, tokens });
    return {
      app: realtime.app,
      // Every stream ends as the drain begins; its client resumes elsewhere with Last-Event-ID.
      onClosing: () => realtime.stop(),
      onClose: async () => redis.disconnect(),
    };
  },
};
