import { repeatEvery } from '@cs/lifecycle';
import { runService } from '@cs/service';
import { createApp, sweepOnce } from './app';
import { readConfig } from './config';

void runService({
  name: 'files',
  readConfig,
  build: async (deps) => {
    const { app, sweeper, removals, storage, turns } = await createApp(deps);
    const { logger } = deps;
    const stopSweeper = repeatEvery(
      deps.config.SWEEP_INTERVAL,
      () => sweepOnce({ sweeper, removals }, logger),
      (err) => logger.warn({ err }, 'sweeper pass failed'),
    );
    const stopPruning = turns.startPruning();
    return {
      app,
      onClose: async () => {
        stopPruning();
        await stopSweeper();
        storage.destroy();
      },
    };
  },
});
