import { runService } from '@cs/service';
import { createApp } from './app';
import { readConfig } from './config';

void runService({
  name: 'identity',
  readConfig,
  build: async (deps) => {
    const { app, throttle } = await createApp(deps);
    const stopPruning = throttle.startPruning((err) => deps.logger.warn({ err }, 'could not prune login failures'));
    return { app, onClose: async () => stopPruning() };
  },
});
