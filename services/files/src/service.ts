import { verifierOf } from '@cs/auth';
import { repeatEvery } from '@cs/lifecycle';
import { PURGE_AGAIN_EVERY_MS } from '@cs/mongo';
import type { ServiceDefinition } from '@cs/service';
import { createApp, sweepOnce } from './app';
import { type Config, readConfig } from './config';

/** Files: its configuration, and what it starts and stops around its app. */
export const filesService: ServiceDefinition<Config> = {
  name: 'files',
  readConfig,
  build: async (deps) => {
    const { config, logger } = deps;
    const tokens = verifierOf(deps.tokens, config.IDENTITY_URL, config.JWT_SECRET, logger);
    const { app, sweeper, removals, storage, turns, accounts } = await createApp({ ...deps, tokens: tokens.verifier });
    const stopSweeper = repeatEvery(
      deps.config.SWEEP_INTERVAL,
      () => sweepOnce(sweeper, logger),
      (err) => logger.warn({ err }, 'sweeper pass failed'),
    );
    // Removals no live process told (it died after the check), at the sweeper's pace.
    const stopRemovals = removals.start(deps.config.SWEEP_INTERVAL);
    const stopPruning = turns.startPruning();
    const stopPurges = repeatEvery(PURGE_AGAIN_EVERY_MS, accounts.purgeAgain, (err) =>
      logger.warn({ err }, 'second purge of deleted accounts failed; will retry'),
    );
    return {
      app,
      onClose: async () => {
        stopPruning();
        tokens.stop();
        await stopSweeper();
        await stopRemovals();
        await stopPurges();
        storage.destroy();
      },
    };
  },
};
