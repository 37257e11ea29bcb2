import { verifierFollowing } from '@cs/auth';
import { runService } from '@cs/service';
import { createApp } from './app';
import { readConfig } from './config';

void runService({
  name: 'notes',
  readConfig,
  build: async (deps) => {
    const { config, logger } = deps;
    const tokens = verifierFollowing(config.IDENTITY_URL, config.JWT_SECRET, logger);
    const { app, outbox, turns } = await createApp({ ...deps, tokens: tokens.verifier });
    const stopOutbox = outbox.start(deps.config.OUTBOX_INTERVAL);
    const stopPruning = turns.startPruning();
    return {
      app,
      onClose: async () => {
        stopPruning();
        tokens.stop();
        await stopOutbox();
      },
    };
  },
});
