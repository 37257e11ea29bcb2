import { runService } from '@cs/service';
import { createApp } from './app';
import { readConfig } from './config';
import { startOutbox } from './release-outbox';

void runService({
  name: 'notes',
  readConfig,
  build: async (deps) => {
    const { app, outbox } = await createApp(deps);
    return { app, onClose: startOutbox(outbox, deps.config.OUTBOX_INTERVAL, deps.logger) };
  },
});
