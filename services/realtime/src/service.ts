import { verifierOf } from '@cs/auth';
import { connectBus } from '@cs/event-bus';
import type { ServiceDefinition } from '@cs/service';
import { createApp } from './app';
import { type Config, readConfig } from './config';

/** Realtime: its configuration, and what it starts and stops around its app. */
export const realtimeService: ServiceDefinition<Config> = {
  name: 'realtime',
  readConfig,
  build: async ({ config, logger, tokens: shared }) => {
    const tokens = verifierOf(shared, config.IDENTITY_URL, config.JWT_SECRET, logger);
    const redis = await connectBus(config.REDIS_URL, {
      onRetry: (attempt, err) => logger.warn({ attempt, err: String(err) }, 'the bus is not reachable yet; retrying'),
    });
    const realtime = await createApp({ config, redis, logger, tokens: tokens.verifier });
    return {
      app: realtime.app,
      // Every stream ends as the drain begins; its client resumes elsewhere with Last-Event-ID.
      onClosing: () => realtime.stop(),
      onClose: async () => {
        tokens.stop();
        redis.disconnect();
      },
    };
  },
};
