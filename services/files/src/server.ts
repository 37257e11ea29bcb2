import { runService } from '@cs/service';
import { createApp, startSweeper } from './app';
import { readConfig } from './config';

void runService({
  name: 'files',
  readConfig,
  build: async (deps) => {
    const { app, uploads, storage } = await createApp(deps);
    const stopSweeper = startSweeper(uploads, deps.config.SWEEP_INTERVAL, deps.logger);
    return {
      app,
      onClose: async () => {
        await stopSweeper();
        storage.destroy();
      },
    };
  },
});
