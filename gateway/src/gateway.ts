import type { IncomingMessage } from 'node:http';
import { KEEP_ALIVE_TIMEOUT_MS } from '@cs/lifecycle';
import type { PartDefinition } from '@cs/service';
import { createGateway } from './app';
import { type Config, readConfig } from './config';
import { connectionBudget, connectionCap, openFilesLimit } from './connection-limits';
import { connectionsRefused } from './metrics';
import { boundPipelining } from './pipelining';
import { resolveRoute } from './route-table';
import { createSharedLimits } from './shared-limits';
import { upstreamSocketsMax } from './upstream/connection-pool';

/** Whether a request opens a stream of events, by the route table. */
function isStreamRequest(req: IncomingMessage): boolean {
  const path = (req.url ?? '/').split('?', 1)[0] as string;
  return resolveRoute(req.method ?? 'GET', path)?.stream === true;
}

/**
 * The gateway, a part like every service: its app in front of the services (reached as the
 * process reaches them), its limits (shared in Redis when REDIS_URL is set), and the bounds on the
 * connections of the server that listens for it. Whether it runs in a process of its own
 * (server.ts) or with every service (server/), it is this.
 */
export const gatewayPart: PartDefinition<Config> = {
  name: 'gateway',
  readConfig,
  // It faces browsers: it keeps idle connections as long as it announces, and no longer.
  keepAliveTimeoutMs: KEEP_ALIVE_TIMEOUT_MS,
  build: async ({ config, logger, tokens, reach }) => {
    const sharedLimits = config.REDIS_URL ? createSharedLimits(config.REDIS_URL, logger) : undefined;
    const app = createGateway(config, logger, { tokens, sharedLimits, reach });
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
    return {
      app: { callback: () => boundPipelining(isStreamRequest, cap.guard(app)) },
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
        await sharedLimits?.close();
      },
    };
  },
};
