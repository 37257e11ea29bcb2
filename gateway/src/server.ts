import { ConfigError } from '@cs/config';
import { runServer } from '@cs/lifecycle';
import { createLogger } from '@cs/log';
import { createGateway } from './app';
import { readConfig } from './config';

function main(): void {
  let config: ReturnType<typeof readConfig>;
  try {
    config = readConfig();
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`gateway: ${err.message}\n`);
    process.exit(1);
  }
  const logger = createLogger({ name: 'gateway', level: config.LOG_LEVEL });
  const app = createGateway(config, logger);
  runServer({ app: { callback: () => app }, port: config.PORT, host: config.HOST, logger }).catch((err: unknown) => {
    logger.fatal({ err }, 'could not start');
    process.exit(1);
  });
}

main();
