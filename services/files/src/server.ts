import { runService } from '@cs/service';
import { createApp, startSweeper } from './app';
import { readConfig } from './config';

void runService({
  name: 'files',
  readConfig,
  build: async (deps) => {
    const { app, uploads, storage, turns } = await createApp(deps);
    const stopSweeper = startSweeper(uploads, deps.config.SWEEP_INTERVAL, deps.logger);
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
