import { configOrExit } from '@cs/config';
import { runServer } from '@cs/lifecycle';
import { createLogger } from '@cs/log';
import { startMetrics, startTracing, stopTracing } from '@cs/telemetry';
import type { BaseConfig, PartDefinition } from './part';
import { startPart } from './start-part';

/**
 * One part in a process of its own, listening on its PORT until SIGTERM: each service's and the
 * gateway's `server.ts`, one container each in Compose. Read and check the configuration (a bad
 * one stops the boot naming the key); start tracing and metrics first (what is built next asks
 * whether they are on: metrics are served on their own port from before the database connects,
 * and tracing sends its last spans at the end); start the part; listen; on SIGTERM drain and close.
 */
export async function runPart<C extends BaseConfig>(definition: PartDefinition<C>): Promise<void> {
  const { name } = definition;
  const config = configOrExit(name, definition.readConfig, process.env);
  const logger = createLogger({ name, level: config.LOG_LEVEL });
  try {
    startTracing(name);
    const metrics = await startMetrics(name, config);
    if (metrics) logger.info({ url: metrics.url }, 'metrics served');
    const part = await startPart(definition, config, logger);
    await runServer({
      app: part.app,
      port: config.PORT,
      host: config.HOST,
      logger,
      configure: part.configure,
      onClosing: part.onClosing,
      keepAliveTimeoutMs: part.keepAliveTimeoutMs,
      onClose: async () => {
        await part.close();
        await metrics?.close();
        await stopTracing();
      },
    });
  } catch (err) {
    logger.fatal({ err }, 'could not start');
    process.exit(1);
  }
}
