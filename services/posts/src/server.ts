import { runService } from '@cs/service';
import { createApp } from './app';
import { readConfig } from './config';

void runService({
  name: 'posts',
  readConfig,
  build: async (deps) => ({ app: await createApp(deps) }),
});
