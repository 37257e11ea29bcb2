import { verifierFollowing } from '@cs/auth';
import { busClient, createEventBus } from '@cs/event-bus';
import type { ServiceDefinition } from '@cs/service';
import { createApp } from './app';
import { type Config, readConfig } from './config';

/** Notes: its configuration, and what it starts and stops around its app. */
export const notesService: ServiceDefinition<Config> = {
  name: 'notes',
  readConfig,
  build: async (deps) => {
    const { config, logger } = deps;
    const tokens = verifierFollowing(config.IDENTITY_URL, config.JWT_SECRET, logger);
    const redis = busClient(config.REDIS_URL);
    const { app, outbox, events, turns } = await createApp({
      ...deps,
      tokens: tokens.verifier,
      bus: createEventBus(redis),
    });
    const stopOutbox = outbox.start(deps.config.OUTBOX_INTERVAL);
    const stopEvents = events.start(config.EVENTS_INTERVAL);
    const stopPruning = turns.startPruning();
    return {
      app,
      onClose: async () => {
        stopPruning();
        tokens.stop();
        await stopOutbox();
        await stopEvents();
        redis.disconnect();
      },
    };
  },
};
