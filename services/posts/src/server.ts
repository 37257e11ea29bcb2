import { runService } from '@cs/service';
import { createApp } from './app';
import { readConfig } from './config';

void runService({
  name: 'posts',
  readConfig,
  build: async (deps) => {
    const { app, turns } = await createApp(deps);
    const stopPruning = turns.startPruning();
    return { app, onClose: async () => stopPruning() };
  },
});
