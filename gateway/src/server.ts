import { verifierFollowing } from '@cs/auth';
import { ConfigError } from '@cs/config';
import { runServer } from '@cs/lifecycle';
import { createLogger } from '@cs/log';
import { startMetrics, startTracing, stopTracing } from '@cs/telemetry';
import { createGateway } from './app';
import { readConfig } from './config';
import { connectionBudget, connectionCap, openFilesLimit } from './connection-limits';
import { connectionsRefused } from './metrics';
import { createSharedLimits } from './shared-limits';
import { upstreamSocketsMax } from './upstream/connection-pool';

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
    const tokens = verifierFollowing(config.IDENTITY_URL, config.JWT_SECRET, logger);
    const app = createGateway(config, logger, { tokens: tokens.verifier, sharedLimits });
    // Express's own reading of TRUST_PROXY: whether the peer of a connection is a proxy.
    const trusted = app.get('trust proxy fn') as (address: string, hop: number) => boolean;
    const cap = connectionCap({
      perAddress: config.CONNECTIONS_PER_ADDRESS,
      isProxy: (address) => trusted(address, 0),
      onRefused: () => connectionsRefused.inc({ limit: 'address' }),
    });
    const openFiles = openFilesLimit();
    const maxConnections =
      config.MAX_CONNECTIONS ||
      (openFiles === undefined ? undefined : connectionBudget(openFiles, upstreamSocketsMax()));
    await runServer({
      app: { callback: () => cap.guard(app) },
      port: config.PORT,
      host: config.HOST,
      logger,
      configure(server) {
        cap.attach(server);
        if (maxConnections === undefined) {
          logger.warn('the open-files limit is unknown: set MAX_CONNECTIONS, or connections are not bounded');
          return;
        }
        server.maxConnections = maxConnections;
        server.on('drop', () => connectionsRefused.inc({ limit: 'total' }));
        logger.info({ maxConnections, openFiles, perAddress: config.CONNECTIONS_PER_ADDRESS }, 'connections bounded');
      },
      onClose: async () => {
        tokens.stop();
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
