import { repeatEvery, SERVICE_KEEP_ALIVE_TIMEOUT_MS } from '@cs/lifecycle';
import type { PartDefinition } from '@cs/service';
import { createApp, sweepOnce } from './app';
import { type Config, readConfig } from './config';

/** Files: its configuration, and what it starts and stops around its app. */
export const filesService: PartDefinition<Config> = {
  name: 'files',
  readConfig,
  keepAliveTimeoutMs: SERVICE_KEEP_ALIVE_TIMEOUT_MS,
  build: async (deps) => {
    const { logger } = deps;
    const { app, sweeper, removals, storage, turns, accounts } = await createApp(deps);
    return {
      app,
      stops: [
        repeatEvery(
          deps.config.SWEEP_INTERVAL,
          () => sweepOnce(sweeper, logger),
          (err) => logger.warn({ err }, 'sweeper pass failed'),
        ),
        // Removals no live process told (it died after the check), at the sweeper's pace.
        removals.start(deps.config.SWEEP_INTERVAL),
        turns.startPruning(),
        accounts.startPurgingAgain(logger),
      ],
      onClose: async () => storage.destroy(),
    };
  },
};
