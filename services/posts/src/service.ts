import { busClient, createEventBus } from '@cs/event-bus';
import { SERVICE_KEEP_ALIVE_TIMEOUT_MS } from '@cs/lifecycle';
import type { PartDefinition } from '@cs/service';
import { createApp } from './app';
import { type Config, readConfig } from './config';

/** Posts: its configuration, and what it starts and stops around its app. */
export const postsService: PartDefinition<Config> = {
  name: 'posts',
  readConfig,
  keepAliveTimeoutMs: SERVICE_KEEP_ALIVE_TIMEOUT_MS,
  build: async (deps) => {
    const { config, logger } = deps;
    const redis = busClient(config.REDIS_URL);
    const { app, turns, events, accounts } = await createApp({
      ...deps,
      bus: createEventBus(redis),
    });
    return {
      app,
      stops: [turns.startPruning(), events.start(config.EVENTS_INTERVAL), accounts.startPurgingAgain(logger)],
      onClose: async () => redis.disconnect(),
    };
  },
};
