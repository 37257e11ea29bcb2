import type { IncomingMessage, Server } from 'node:http';
import { type TokenVerifier, verifierOf } from '@cs/auth';
import type { HttpApp } from '@cs/lifecycle';
import type { Logger } from '@cs/log';
import { createGateway } from './app';
import type { Config } from './config';
import { connectionBudget, connectionCap, openFilesLimit } from './connection-limits';
import { connectionsRefused } from './metrics';
import { boundPipelining } from './pipelining';
import { resolveRoute } from './route-table';
import { createSharedLimits } from './shared-limits';
import { upstreamSocketsMax } from './upstream/connection-pool';

export interface StartedGateway {
  app: HttpApp;
  /** Bounds the listening server's connections: per client address, and in all. */
  configure(server: Server): void;
  close(): Promise<void>;
}

/** Whether a request opens a stream of events, by the route table. */
function isStreamRequest(req: IncomingMessage): boolean {
  const path = (req.url ?? '/').split('?', 1)[0] as string;
  return resolveRoute(req.method ?? 'GET', path)?.stream === true;
}

/**
 * The gateway, built and ready to listen: its token verifier following identity's revocation log
 * (or the process's one, `shared`, with every service: server/), its limits (shared in Redis when
 * REDIS_URL is set), and the bounds on its connections. Whether it runs in a process of its own
 * (server.ts) or with every service (server/), it is this.
 */
export function startGateway(config: Config, logger: Logger, shared?: TokenVerifier): StartedGateway {
  const sharedLimits = config.REDIS_URL ? createSharedLimits(config.REDIS_URL, logger) : undefined;
  const tokens = verifierOf(shared, config.IDENTITY_URL, config.JWT_SECRET, logger);
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
    config.MAX_CONNECTIONS || (openFiles === undefined ? undefined : connectionBudget(openFiles, upstreamSocketsMax()));
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
    close: async () => {
      tokens.stop();
      await sharedLimits?.close();
    },
  };
}
