import { verifierFollowing } from '@cs/auth';
import { runService } from '@cs/service';
import { Redis } from 'ioredis';
import { createApp } from './app';
import { readConfig } from './config';

void runService({
  name: 'realtime',
  readConfig,
  build: async ({ config, logger }) => {
    const tokens = verifierFollowing(config.IDENTITY_URL, config.JWT_SECRET, logger);
    // Commands fail at once while Redis is away (the readiness check says so), instead of queueing.
    const redis = new Redis(config.REDIS_URL, { maxRetriesPerRequest: 1, enableOfflineQueue: false });
    redis.on('error', () => undefined);
    const realtime = await createApp({ config, redis, logger, tokens: tokens.verifier });
    return {
      app: realtime.app,
      onClose: async () => {
        realtime.stop();
        tokens.stop();
        redis.disconnect();
      },
    };
  },
});
