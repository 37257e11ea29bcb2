import { runService } from '@cs/service';
import { createApp } from './app';
import { readConfig } from './config';
import { startOutbox } from './release-outbox';

void runService({
  name: 'notes',
  readConfig,
  build: async (deps) => {
    const { app, outbox, turns } = await createApp(deps);
    const stopOutbox = startOutbox(outbox, deps.config.OUTBOX_INTERVAL, deps.logger);
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
