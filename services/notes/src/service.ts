import { verifierOf } from '@cs/auth';
import { busClient, createEventBus } from '@cs/event-bus';
import { repeatEvery } from '@cs/lifecycle';
import { PURGE_AGAIN_EVERY_MS } from '@cs/mongo';
import type { ServiceDefinition } from '@cs/service';
import { createApp } from './app';
import { type Config, readConfig } from './config';

/** Notes: its configuration, and what it starts and stops around its app. */
export const notesService: ServiceDefinition<Config> = {
  name: 'notes',
  readConfig,
  build: async (deps) => {
    const { config, logger } = deps;
    const tokens = verifierOf(deps.tokens, config.IDENTITY_URL, config.JWT_SECRET, logger);
    const redis = busClient(config.REDIS_URL);
    const { app, outbox, events, turns, accounts } = await createApp({
      ...deps,
      tokens: tokens.verifier,
      bus: createEventBus(redis),
    });
    const stopOutbox = outbox.start(deps.config.OUTBOX_INTERVAL);
    const stopEvents = events.start(config.EVENTS_INTERVAL);
    const stopPruning = turns.startPruning();
    const stopPurges = repeatEvery(PURGE_AGAIN_EVERY_MS, accounts.purgeAgain, (err) =>
      logger.warn({ err }, 'second purge of deleted accounts failed; will retry'),
    );
    return {
      app,
      onClose: async () => {
        stopPruning();
        tokens.stop();
        await stopOutbox();
        await stopEvents();
        await stopPurges();
        redis.disconnect();
      },
    };
  },
};
