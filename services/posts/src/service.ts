import { verifierFollowing } from '@cs/auth';
import { busClient, createEventBus } from '@cs/event-bus';
import type { ServiceDefinition } from '@cs/service';
import { createApp } from './app';
import { type Config, readConfig } from './config';

/** Posts: its configuration, and what it starts and stops around its app. */
export const postsService: ServiceDefinition<Config> = {
  name: 'posts',
  readConfig,
  build: async (deps) => {
    const { config, logger } = deps;
    const tokens = verifierFollowing(config.IDENTITY_URL, config.JWT_SECRET, logger);
    const redis = busClient(config.REDIS_URL);
    const { app, turns, events } = await createApp({ ...deps, tokens: tokens.verifier, bus: createEventBus(redis) });
    const stopPruning = turns.startPruning();
    const stopEvents = events.start(config.EVENTS_INTERVAL);
    return {
      app,
      onClose: async () => {
        stopPruning();
        tokens.stop();
        await stopEvents();
        redis.disconnect();
      },
    };
  },
};
