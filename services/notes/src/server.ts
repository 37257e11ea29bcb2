import { runService } from '@cs/service';
import { createApp } from './app';
import { readConfig } from './config';

void runService({
  name: 'notes',
  readConfig,
  build: async (deps) => {
    const { app, outbox, turns } = await createApp(deps);
    const stopOutbox = outbox.start(deps.config.OUTBOX_INTERVAL);
    const stopPruning = turns.startPruning();
    return {
      app,
      onClose: async () => {
        stopPruning();
        await stopOutbox();
      },
    };
  },
});
