/**
 * How every service boots: read and check config (a bad one stops the boot naming the key),
 * connect to its database with retry (when it has one), build the app, listen, and on SIGTERM drain and close.
 * Tracing and metrics, when configured, start first (what is built next asks whether they are on):
 * metrics are served on their own port from before the database connects, and tracing sends its
 * last spans at the end.
 */
import { ConfigError } from '@cs/config';
import { type HttpApp, runServer } from '@cs/lifecycle';
import { createLogger, type Logger } from '@cs/log';
import { type Connection, connectMongo, watchReachability } from '@cs/mongo';
import { startMetrics, startTracing, stopTracing } from '@cs/telemetry';

export interface BaseConfig {
  readonly PORT: number;
  readonly HOST: string;
  readonly METRICS_PORT: number;
  readonly METRICS_HOST: string;
  /** The service's database; a service without one (realtime) has no such key. */
  readonly MONGO_URL?: string;
  readonly LOG_LEVEL: string;
}

/** A service with a database gets its connection; one without gets none. */
export type ConnectionOf<C extends BaseConfig> = C extends { readonly MONGO_URL: string } ? Connection : undefined;

export interface Built {
  app: HttpApp;
  /** Ends answers that never end on their own (event streams) when the drain begins. */
  onClosing?: () => void;
  /** Stops what the app started (timers, clients); the database is closed after it. */
  onClose?: () => Promise<void>;
}

export interface ServiceDefinition<C extends BaseConfig> {
  name: string;
  readConfig(): C;
  build(deps: { config: C; connection: ConnectionOf<C>; logger: Logger }): Promise<Built>;
}

export async function runService<C extends BaseConfig>({
  name,
  readConfig,
  build,
}: ServiceDefinition<C>): Promise<void> {
  let config: C;
  try {
    config = readConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${name}: ${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
  const logger = createLogger({ name, level: config.LOG_LEVEL });
  try {
    startTracing(name);
    const metrics = await startMetrics(name, config);
    if (metrics) logger.info({ url: metrics.url }, 'metrics served');
    const connection = config.MONGO_URL === undefined ? undefined : await connectDatabase(config.MONGO_URL, logger);
    const { app, onClosing, onClose } = await build({ config, connection: connection as ConnectionOf<C>, logger });
    await runServer({
      app,
      port: config.PORT,
      host: config.HOST,
      logger,
      onClosing,
      onClose: async () => {
        await onClose?.();
        await connection?.close();
        await metrics?.close();
        await stopTracing();
      },
    });
  } catch (err) {
    logger.fatal({ err }, 'could not start');
    process.exit(1);
  }
}

async function connectDatabase(url: string, logger: Logger): Promise<Connection> {
  const connection = await connectMongo(url, {
    onRetry: (attempt, err) => logger.warn({ attempt, err: String(err) }, 'database not reachable yet; retrying'),
  });
  watchReachability(connection, {
    lost: (reason) => logger.warn({ reason }, 'database stopped answering; requests that need it get 503'),
    regained: () => logger.info('database answers again'),
  });
  return connection;
}
