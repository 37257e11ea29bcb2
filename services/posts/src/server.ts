// First: when tracing is on, it patches http, koa, mongodb and the S3 client as they load.
import '@cs/telemetry/start';
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
