import { verifierFollowing } from '@cs/auth';
import { runService } from '@cs/service';
import { createApp } from './app';
import { readConfig } from './config';

void runService({
  name: 'posts',
  readConfig,
  build: async (deps) => {
    const { config, logger } = deps;
    const tokens = verifierFollowing(config.IDENTITY_URL, config.JWT_SECRET, logger);
    const { app, turns } = await createApp({ ...deps, tokens: tokens.verifier });
    const stopPruning = turns.startPruning();
    return {
      app,
      onClose: async () => {
        stopPruning();
        tokens.stop();
      },
    };
  },
});
