import type { StorageSettings } from '@cs/storage';
import type { ProcessName, ServiceName } from './parts';

/** What a system of real processes is started with (startSystem). */
export interface SystemOptions {
  dataDir: string;
  mongoUrl: string;
  storage: StorageSettings;
  jwtSecret: string;
  jwtExpiresIn?: string;
  gatewayPort?: number;
  /** Where the gateway listens (every interface by default); the services always on loopback. */
  gatewayHost?: string;
  frontendOrigin?: string;
  /** Where identity sends e-mail (password reset); without it, identity has no mailer. */
  smtpUrl?: string;
  /** Prefix of every database name, so several systems can share one server. */
  dbPrefix?: string;
  /** Extra environment for every process, then for one. */
  env?: Record<string, string>;
  processEnv?: Partial<Record<ProcessName, Record<string, string>>>;
  /** Whether every process serves Prometheus metrics, each on a loopback port of its own. */
  metrics?: boolean;
  /** Options for Node itself (before the entry script), for every process: `--trace-gc`, say. */
  nodeArgs?: string[];
  echo?: boolean;
  /** Replicas of each service (default 1), or of some: `{ notes: 3, files: 3 }`. */
  replicas?: number | Partial<Record<ServiceName, number>>;
  /** Gateway replicas (default 1). */
  gateways?: number;
  /** Put the balancer in front even of single replicas (it is there whenever anything has two). */
  balanced?: boolean;
  /** Where the gateways count their rate limits together (REDIS_URL); in memory without it. */
  redisUrl?: string;
  /**
   * The event bus (a Redis) that posts and notes publish their change events to, as REDIS_URL; without it,
   * the system runs a redis-server of its own under dataDir.
   */
  busUrl?: string;
  /**
   * The gateway and every service in one Node process (server/), as `npm start`
   * runs them; else one process each, as Compose does. By default one process, unless scaled:
   * one process has one of each, so replicas and a balancer need one process each.
   */
  oneProcess?: boolean;
  /**
   * Connections one client address may hold at once (0: no cap): the gateway's own
   * CONNECTIONS_PER_ADDRESS, or behind the balancer its frontend's, the gateways then counting
   * none (every connection they see is the balancer's). Default 256, the gateway's.
   */
  connectionsPerAddress?: number;
}
