import { repeatEvery } from '@cs/lifecycle';
import { runService } from '@cs/service';
import { createApp } from './app';
import { readConfig } from './config';

void runService({
  name: 'notes',
  readConfig,
  build: async (deps) => {
    const { app, outbox, turns } = await createApp(deps);
    const stopOutbox = repeatEvery(
      deps.config.OUTBOX_INTERVAL,
      () => outbox.drain(),
      (err) => deps.logger.warn({ err }, 'outbox pass failed'),
    );
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
