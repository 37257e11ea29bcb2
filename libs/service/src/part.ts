/**
 * What every part of the system is, the gateway and each service alike: a name, its configuration,
 * and how it builds its app around what the process gives it. One shape, started one way, whether
 * a part runs in a process of its own (run-part.ts: one container each in Compose) or with every
 * other part in one (server/).
 */
import type { Server } from 'node:http';
import type { TokenVerifier } from '@cs/auth';
import type { HttpApp, ServiceReach } from '@cs/lifecycle';
import type { Logger } from '@cs/log';
import type { Connection } from '@cs/mongo';

export interface BaseConfig {
  readonly PORT: number;
  readonly HOST: string;
  readonly METRICS_PORT: number;
  readonly METRICS_HOST: string;
  /** The part's database; a part without one (realtime, the gateway) has no such key. */
  readonly MONGO_URL?: string;
  readonly LOG_LEVEL: string;
}

/** A part with a database gets its connection; one without gets none. */
export type ConnectionOf<C extends BaseConfig> = C extends { readonly MONGO_URL: string } ? Connection : undefined;

/**
 * A part that checks tokens against identity's revocation log (every part but identity, which
 * keeps that log) gets a verifier; identity gets none.
 */
export type TokensOf<C extends BaseConfig> = C extends { readonly IDENTITY_URL: string; readonly JWT_SECRET: string }
  ? TokenVerifier
  : undefined;

export interface PartDeps<C extends BaseConfig> {
  config: C;
  connection: ConnectionOf<C>;
  logger: Logger;
  /** The verifier the part checks tokens with, which its starter stops. */
  tokens: TokensOf<C>;
  /** How the part reaches the services it calls: over the network, or in memory in one process. */
  reach: ServiceReach;
}

export interface Built {
  app: HttpApp;
  /** Bounds and listeners of the part's own on the server that listens for it (the gateway's). */
  configure?: (server: Server) => void;
  /** Ends answers that never end on their own (event streams) when the drain begins. */
  onClosing?: () => void;
  /**
   * What the part started besides its app (timers, pollers, followers), each as the function that
   * stops it: called together once the drain is over, each waited for (a pass under way ends first).
   */
  stops?: readonly (() => unknown)[];
  /** Closes the part's clients (the bus, storage, mail), after its stops; then its database and verifier. */
  onClose?: () => Promise<void>;
}

export interface PartDefinition<C extends BaseConfig> {
  name: string;
  /** The part's configuration, from `source` (the environment). */
  readConfig(source?: NodeJS.ProcessEnv): C;
  /**
   * How long its idle connections stay open: a service, reached by our own hops only, keeps them
   * longer than any of its clients does (SERVICE_KEEP_ALIVE_TIMEOUT_MS); the gateway, reached by
   * browsers, as long as it announces (KEEP_ALIVE_TIMEOUT_MS).
   */
  keepAliveTimeoutMs: number;
  build(deps: PartDeps<C>): Promise<Built>;
}
