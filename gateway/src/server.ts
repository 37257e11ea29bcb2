import { configOrExit } from '@cs/config';
import { runServer } from '@cs/lifecycle';
import { createLogger } from '@cs/log';
import { startMetrics, startTracing, stopTracing } from '@cs/telemetry';
import { readConfig } from './config';
import { startGateway } from './gateway';

/** The gateway in a process of its own, in front of services reached over HTTP. */
async function main(): Promise<void> {
  const config = configOrExit('gateway', readConfig, process.env);
  const logger = createLogger({ name: 'gateway', level: config.LOG_LEVEL });
  try {
    // Before the app is built: it traces and measures requests only when these are on.
    startTracing('gateway');
    const metrics = await startMetrics('gateway', config);
    if (metrics) logger.info({ url: metrics.url }, 'metrics served');
    const gateway = startGateway(config, logger);
    await runServer({
      app: gateway.app,
      port: config.PORT,
      host: config.HOST,
      logger,
      configure: gateway.configure,
      onClose: async () => {
        await gateway.close();
        await metrics?.close();
        await stopTracing();
      },
    });
  } catch (err) {
    logger.fatal({ err }, 'could not start');
    process.exit(1);
  }
}

void main();
