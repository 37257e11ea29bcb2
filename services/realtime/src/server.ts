import { verifierFollowing } from '@cs/auth';
import { busClient } from '@cs/event-bus';
import { runService } from '@cs/service';
import { createApp } from './app';
import { readConfig } from './config';

void runService({
  name: 'realtime',
  readConfig,
  build: async ({ config, logger }) => {
    const tokens = verifierFollowing(config.IDENTITY_URL, config.JWT_SECRET, logger);
    const redis = busClient(config.REDIS_URL);
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
