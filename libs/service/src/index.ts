/**
 * How every service boots: read and check config (a bad one stops the boot naming the key),
 * connect to its database with retry (when it has one), build the app, listen, and on SIGTERM drain and close.
 * Tracing and metrics, when configured, start first (what is built next asks whether they are on):
 * metrics are served on their own port from before the database connects, and tracing sends its
 * last spans at the end.
 */
import type { TokenVerifier } from '@cs/auth';
import { configOrExit } from '@cs/config';
import { type HttpApp, runServer, SERVICE_KEEP_ALIVE_TIMEOUT_MS } from '@cs/lifecycle';
import { createLogger, type Logger } from '@cs/log';
import { type Connection, connectMongo, watchReachability } from '@cs/mongo';
import { startMetrics, startTracing, stopTracing } from '@cs/telemetry';

export { configOrExit };

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
  /** The service's configuration, from `source` (the environment). */
  readConfig(source?: NodeJS.ProcessEnv): C;
  /**
   * `tokens`, when given, is the process's one verifier (the one-process mode): the service checks
   * tokens with it rather than follow identity's revocation log itself (`verifierOf`, @cs/auth).
   */
  build(deps: { config: C; connection: ConnectionOf<C>; logger: Logger; tokens?: TokenVerifier }): Promise<Built>;
}

/** What the process holds for the services it runs together: their database, their verifier. */
export interface SharedByProcess {
  /** The service's database on a connection the caller holds and closes. */
  database?: Connection;
  /** The process's token verifier, which the caller stops. */
  tokens?: TokenVerifier;
}

/** A service built and ready to serve, not yet listening: its app, and how it stops. */
export interface StartedService<C extends BaseConfig = BaseConfig> {
  name: string;
  config: C;
  logger: Logger;
  app: HttpApp;
  onClosing?: () => void;
  /** Stops what the service started, then closes its database connection. */
  close(): Promise<void>;
}

/**
 * Connects a service to its database (when it has one) and builds its app: one service, started.
 * What `shared` gives (every part of one process on one database client, and one verifier), the
 * service uses and leaves to the caller to close.
 */
export async function startService<C extends BaseConfig>(
  { name, build }: ServiceDefinition<C>,
  config: C,
  logger: Logger,
  { database, tokens }: SharedByProcess = {},
): Promise<StartedService<C>> {
  const connection =
    database ?? (config.MONGO_URL === undefined ? undefined : await connectDatabase(config.MONGO_URL, logger));
  const { app, onClosing, onClose } = await build({
    config,
    connection: connection as ConnectionOf<C>,
    logger,
    tokens,
  });
  return {
    name,
    config,
    logger,
    app,
    onClosing,
    close: async () => {
      await onClose?.();
      if (database === undefined) await connection?.close();
    },
  };
}

/** One service in a process of its own, listening on its PORT until SIGTERM. */
export async function runService<C extends BaseConfig>(definition: ServiceDefinition<C>): Promise<void> {
  const { name } = definition;
  const config = configOrExit(name, definition.readConfig, process.env);
  const logger = createLogger({ name, level: config.LOG_LEVEL });
  try {
    startTracing(name);
    const metrics = await startMetrics(name, config);
    if (metrics) logger.info({ url: metrics.url }, 'metrics served');
    const service = await startService(definition, config, logger);
    await runServer({
      app: service.app,
      port: config.PORT,
      host: config.HOST,
      logger,
      onClosing: service.onClosing,
      keepAliveTimeoutMs: SERVICE_KEEP_ALIVE_TIMEOUT_MS,
      onClose: async () => {
        await service.close();
        await metrics?.close();
        await stopTracing();
      },
    });
  } catch (err) {
    logger.fatal({ err }, 'could not start');
    process.exit(1);
  }
}

/**
 * A connection to the database server at `url`, retried while it starts, whose loss and return are
 * logged. `maxPoolSize`: see connectMongo.
 */
export async function connectDatabase(url: string, logger: Logger, maxPoolSize?: number): Promise<Connection> {
  const connection = await connectMongo(url, {
    maxPoolSize,
    onRetry: (attempt, err) => logger.warn({ attempt, err: String(err) }, 'database not reachable yet; retrying'),
  });
  watchReachability(connection, {
    lost: (reason) => logger.warn({ reason }, 'database stopped answering; requests that need it get 503'),
    regained: () => logger.info('database answers again'),
  });
  return connection;
}
