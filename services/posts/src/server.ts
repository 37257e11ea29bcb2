import { verifierFollowing } from '@cs/auth';
import { busClient, createEventBus } from '@cs/event-bus';
import { runService } from '@cs/service';
import { createApp } from './app';
import { readConfig } from './config';

void runService({
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
});
