import { ConfigError } from '@cs/config';
import { runServer } from '@cs/lifecycle';
import { createLogger } from '@cs/log';
import { startMetrics, startTracing, stopTracing } from '@cs/telemetry';
import { createGateway } from './app';
import { readConfig } from './config';
import { createSharedLimits } from './shared-limits';

async function main(): Promise<void> {
  let config: ReturnType<typeof readConfig>;
  try {
    config = readConfig();
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`gateway: ${err.message}\n`);
    process.exit(1);
  }
  const logger = createLogger({ name: 'gateway', level: config.LOG_LEVEL });
  try {
    // Before the app is built: it traces and measures requests only when these are on.
    startTracing('gateway');
    const metrics = await startMetrics('gateway', config);
    if (metrics) logger.info({ url: metrics.url }, 'metrics served');
    const sharedLimits = config.REDIS_URL ? createSharedLimits(config.REDIS_URL, logger) : undefined;
    const app = createGateway(config, logger, { sharedLimits });
    await runServer({
      app: { callback: () => app },
      port: config.PORT,
      host: config.HOST,
      logger,
      onClose: async () => {
        await metrics?.close();
        await sharedLimits?.close();
        await stopTracing();
      },
    });
  } catch (err) {
    logger.fatal({ err }, 'could not start');
    process.exit(1);
  }
}

void main();
