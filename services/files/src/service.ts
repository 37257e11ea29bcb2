import { verifierFollowing } from '@cs/auth';
import { repeatEvery } from '@cs/lifecycle';
import type { ServiceDefinition } from '@cs/service';
import { createApp, sweepOnce } from './app';
import { type Config, readConfig } from './config';

/** Files: its configuration, and what it starts and stops around its app. */
export const filesService: ServiceDefinition<Config> = {
  name: 'files',
  readConfig,
  build: async (deps) => {
    const { config, logger } = deps;
    const tokens = verifierFollowing(config.IDENTITY_URL, config.JWT_SECRET, logger);
    const { app, sweeper, removals, storage, turns } = await createApp({ ...deps, tokens: tokens.verifier });
    const stopSweeper = repeatEvery(
      deps.config.SWEEP_INTERVAL,
      () => sweepOnce(sweeper, logger),
      (err) => logger.warn({ err }, 'sweeper pass failed'),
    );
    // Removals no live process told (it died after the check), at the sweeper's pace.
    const stopRemovals = removals.start(deps.config.SWEEP_INTERVAL);
    const stopPruning = turns.startPruning();
    return {
      app,
      onClose: async () => {
        stopPruning();
        tokens.stop();
        await stopSweeper();
        await stopRemovals();
        storage.destroy();
      },
    };
  },
};
