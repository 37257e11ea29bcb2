import { runService } from '@cs/service';
import { createApp } from './app';
import { readConfig } from './config';

void runService({
  name: 'identity',
  readConfig,
  build: async (deps) => ({ app: await createApp(deps) }),
});
