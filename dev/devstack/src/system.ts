/**
 * The whole system as real processes: the five services and the gateway, each started from its
 * built `dist/src/server.js` with the environment it would get in production.
 *
 * Scaled (`replicas`, `gateways`, or `balanced`): every kind of process runs as several replicas
 * behind a real load balancer (balancer.ts, HAProxy), which is then the only address anything
 * has of a kind: the clients reach the gateways through it, the gateways the services, and the
 * services each other. With `redisUrl` the gateways count their rate limits together.
 */
import { join } from 'node:path';
import type { StorageSettings } from '@cs/storage';
import { type BalancedKind, type RunningBalancer, startBalancer } from './balancer';
import { type Child, freePort, httpAnswer, httpOk, REPO_ROOT, spawnChild, waitFor } from './process';
import { type RunningServer, startRedis, withDatabase } from './servers';

export const SERVICES = ['identity', 'posts', 'notes', 'files', 'realtime'] as const;
export type ServiceName = (typeof SERVICES)[number];
export type ProcessName = ServiceName | 'gateway';

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
   * The gateway and every service in one Node process (server/, SERVICES=all), as `npm start`
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

const CONNECTIONS_PER_ADDRESS = 256;

export interface SystemProcess {
  name: ProcessName;
  /** Which replica of its kind: 0 for the first (and only, unless scaled). */
  replica: number;
  /** Where its stdout and stderr go. */
  logFile: string;
  port: number;
  url: string;
  /** Its `/metrics`, when metrics are on. */
  metricsUrl?: string;
  child: Child;
}

export interface RunningSystem {
  /** Where clients reach the system: the gateway, or the balancer in front of the gateways. */
  gatewayUrl: string;
  /**
   * The first replica of each kind (the only one, unless scaled). In one process, every kind is
   * that process.
   */
  processes: Record<ProcessName, SystemProcess>;
  /** Every replica of each kind, in order. */
  replicas: Record<ProcessName, SystemProcess[]>;
  /** HAProxy in front of every kind, when scaled. */
  balancer?: RunningBalancer;
  /** The event bus's Redis (the system's own, unless `busUrl` named one). */
  busUrl: string;
  /**
   * Starts a replica again on its port (after a stop or a kill), and waits until it is healthy
   * and, behind the balancer, in service again.
   */
  start(name: ProcessName, replica?: number): Promise<SystemProcess>;
  stop(): Promise<void>;
}

/**
 * Node's flags for every process, as the Dockerfile sets them (NODE_OPTIONS). Node 24 lets V8
 * grow the young generation to suit the machine, and under steady load each process's RSS then
 * climbed by 50-100 MB in steps while its live heap stayed at 15-30 MB (bench/results/soak.md).
 * A cap keeps RSS flat. Both semi-spaces of the young generation end up resident, so the cap is
 * memory every process keeps: at 8 MB (against Node's long-standing 16) the five processes took
 * 15 MB less at idle and 35 MB less after load, at the same throughput (1,800 reads a second by
 * id through the gateway, three rounds each, interleaved). At 4 MB the one process of npm start
 * took 9 MB less PSS at idle (113 → 103 MB), with reads by id and creates as fast, within the
 * noise of two runs each (5,282 and 5,009 against 5,479 and 3,777 reads a second; 259 and 279
 * against 269 and 253 creates).
 */
export const NODE_FLAGS = ['--max-semi-space-size=4'];

const ENTRY: Record<ProcessName, string> = {
  identity: 'services/identity/dist/src/server.js',
  posts: 'services/posts/dist/src/server.js',
  notes: 'services/notes/dist/src/server.js',
  files: 'services/files/dist/src/server.js',
  realtime: 'services/realtime/dist/src/server.js',
  gateway: 'gateway/dist/src/server.js',
};
/** Every part in one process. */
const ONE_PROCESS_ENTRY = 'server/dist/src/main.js';

const PROCESSES: readonly ProcessName[] = [...SERVICES, 'gateway'];

/** How many replicas of each kind an options object asks for. */
function replicaCounts(options: SystemOptions): Record<ProcessName, number> {
  const { replicas = 1, gateways = 1 } = options;
  const counts = { gateway: gateways } as Record<ProcessName, number>;
  for (const name of SERVICES) counts[name] = typeof replicas === 'number' ? replicas : (replicas[name] ?? 1);
  for (const [name, n] of Object.entries(counts)) {
    if (!Number.isInteger(n) || n < 1) throw new Error(`replicas of ${name}: ${n} is not a whole number from 1`);
  }
  return counts;
}

/** Where the parts are, for their environments (`environments`). */
export interface PartAddresses {
  /** A part's address as the others call it. */
  url: (name: ProcessName) => string;
  /** The gateway's port, or the balancer's in front of the gateways. */
  gatewayPort: number;
  /** The event bus. */
  busUrl: string;
  /** Whether the balancer is in front of every part. */
  balanced: boolean;
}

/**
 * Each part's environment (`envOf`), the keys every part gets (`common`), and the one process's
 * environment that runs them all (`oneProcessEnv`).
 */
export function environments(options: SystemOptions, where: PartAddresses) {
  const { mongoUrl, storage, jwtSecret, dbPrefix = '' } = options;
  const { url, busUrl, balanced } = where;
  const LOOPBACK = '127.0.0.1';
  const frontendOrigin = options.frontendOrigin ?? `http://localhost:${where.gatewayPort}`;
  // The web client's address, for the links identity writes into its e-mails.
  const webUrl = (frontendOrigin.split(',')[0] ?? frontendOrigin).trim();

  const common = {
    NODE_ENV: 'production',
    JWT_SECRET: jwtSecret,
    JWT_EXPIRES_IN: options.jwtExpiresIn ?? '1h',
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
    FRONTEND_ORIGIN: frontendOrigin,
    ...options.env,
  };
  // Only the gateway (or the balancer in front of the gateways), with its rate limits and token
  // checks, is reachable from other machines: a service called directly would skip both.
  const envOf: Record<ProcessName, Record<string, string | undefined>> = {
    identity: {
      HOST: LOOPBACK,
      MONGO_URL: withDatabase(mongoUrl, `${dbPrefix}identity`),
      // Undefined unsets it: without smtpUrl, identity must not inherit ours (a test run's).
      SMTP_URL: options.smtpUrl || undefined,
      WEB_URL: webUrl,
      // Deleting an account deletes its data in the other services.
      POSTS_URL: url('posts'),
      NOTES_URL: url('notes'),
      FILES_URL: url('files'),
    },
    // Every process but identity follows identity's revocation log (IDENTITY_URL).
    posts: {
      HOST: LOOPBACK,
      MONGO_URL: withDatabase(mongoUrl, `${dbPrefix}posts`),
      IDENTITY_URL: url('identity'),
      REDIS_URL: busUrl,
    },
    notes: {
      HOST: LOOPBACK,
      MONGO_URL: withDatabase(mongoUrl, `${dbPrefix}notes`),
      FILES_URL: url('files'),
      IDENTITY_URL: url('identity'),
      REDIS_URL: busUrl,
    },
    files: {
      HOST: LOOPBACK,
      IDENTITY_URL: url('identity'),
      MONGO_URL: withDatabase(mongoUrl, `${dbPrefix}files`),
      S3_ENDPOINT: storage.endpoint,
      S3_PUBLIC_ENDPOINT: storage.publicEndpoint ?? storage.endpoint,
      S3_ACCESS_KEY_ID: storage.accessKeyId,
      S3_SECRET_ACCESS_KEY: storage.secretAccessKey,
      STORAGE_BUCKET: storage.bucket,
      STORAGE_REGION: storage.region,
      // Told when the check removes the object of an attachment (a size-less link's).
      NOTES_URL: url('notes'),
    },
    // The streams: they follow the bus, and verify tokens as every service does.
    realtime: { HOST: LOOPBACK, IDENTITY_URL: url('identity'), REDIS_URL: busUrl },
    gateway: {
      // Behind the balancer the gateways listen on loopback, and take the client's address from
      // the one hop in front of them (the balancer adds it to X-Forwarded-For).
      HOST: balanced ? LOOPBACK : (options.gatewayHost ?? '0.0.0.0'),
      ...(balanced ? { TRUST_PROXY: '1' } : {}),
      ...(!balanced && options.connectionsPerAddress !== undefined
        ? { CONNECTIONS_PER_ADDRESS: String(options.connectionsPerAddress) }
        : {}),
      ...(options.redisUrl ? { REDIS_URL: options.redisUrl } : {}),
      IDENTITY_URL: url('identity'),
      POSTS_URL: url('posts'),
      NOTES_URL: url('notes'),
      FILES_URL: url('files'),
      REALTIME_URL: url('realtime'),
    },
  };

  /**
   * One process's environment: the gateway's keys as they are, each service's with its name first
   * (server/src/main.ts). The services' addresses are the process's own: it sets them itself.
   */
  const oneProcessEnv = (): Record<string, string | undefined> => {
    const env: Record<string, string | undefined> = {};
    const isAddress = (key: string) => PROCESSES.some((name) => key === `${name.toUpperCase()}_URL`);
    for (const name of PROCESSES) {
      const prefix = name === 'gateway' ? '' : `${name.toUpperCase()}_`;
      for (const [key, value] of Object.entries({ ...envOf[name], ...options.processEnv?.[name] })) {
        // A key a service must not have (undefined, unset in its own process) is empty under its
        // name, which overrides the common one: its reader takes empty as not given.
        if (!isAddress(key)) env[`${prefix}${key}`] = prefix ? (value ?? '') : value;
      }
    }
    return env;
  };
  return { common, envOf, oneProcessEnv };
}

/** Resolves once the gateway's /readyz answers 200 (every service ready), or says what it answers. */
export function systemReady(gatewayUrl: string): Promise<void> {
  return waitFor('the system', () => httpOk(`${gatewayUrl}/readyz`), {
    timeoutMs: 30_000,
    why: async () => {
      const { status, body } = await httpAnswer(`${gatewayUrl}/readyz`);
      return `the gateway's /readyz answers ${status} ${body.slice(0, 1000)}`;
    },
  });
}

export async function startSystem(options: SystemOptions): Promise<RunningSystem> {
  const { dataDir, echo = false } = options;
  const counts = replicaCounts(options);
  const ownBus: RunningServer | undefined = options.busUrl ? undefined : await startRedis({ dataDir });
  const busUrl = options.busUrl ?? (ownBus as RunningServer).url;
  const balanced = options.balanced || Object.values(counts).some((n) => n > 1);
  const oneProcess = options.oneProcess ?? !balanced;
  if (oneProcess && balanced)
    throw new Error('one process runs one of each: replicas and a balancer need a process each');
  const LOOPBACK = '127.0.0.1';

  // Each replica's own port; each kind's address is its one replica's, or the balancer's frontend.
  const replicaPorts = {} as Record<ProcessName, number[]>;
  for (const name of PROCESSES) {
    replicaPorts[name] = [];
    for (let i = 0; i < counts[name]; i++) {
      replicaPorts[name].push(
        name === 'gateway' && !balanced && options.gatewayPort ? options.gatewayPort : await freePort(),
      );
    }
  }
  const kinds: BalancedKind[] = [];
  if (balanced) {
    for (const name of PROCESSES) {
      const isGateway = name === 'gateway';
      kinds.push({
        name,
        host: isGateway ? (options.gatewayHost ?? '0.0.0.0') : LOOPBACK,
        port: isGateway && options.gatewayPort ? options.gatewayPort : await freePort(),
        replicaPorts: replicaPorts[name],
        forwardFor: isGateway,
        ...(isGateway ? { connectionsPerAddress: options.connectionsPerAddress ?? CONNECTIONS_PER_ADDRESS } : {}),
      });
    }
  }
  const kindPort = (name: ProcessName) => kinds.find((k) => k.name === name)?.port ?? (replicaPorts[name][0] as number);
  const url = (name: ProcessName) => `http://${LOOPBACK}:${kindPort(name)}`;
  const metricsPorts = {} as Record<ProcessName, number[]>;
  for (const name of PROCESSES) {
    metricsPorts[name] = [];
    if (options.metrics) for (let i = 0; i < counts[name]; i++) metricsPorts[name].push(await freePort());
  }
  const gatewayUrl = url('gateway');
  const { common, envOf, oneProcessEnv } = environments(options, {
    url,
    gatewayPort: kindPort('gateway'),
    busUrl,
    balanced,
  });

  const replicas = {} as Record<ProcessName, SystemProcess[]>;
  for (const name of PROCESSES) replicas[name] = [];
  const processes = {} as Record<ProcessName, SystemProcess>;
  const start = async (name: ProcessName, replica = 0): Promise<SystemProcess> => {
    const port = replicaPorts[name][replica];
    if (port === undefined) throw new Error(`${name} has no replica ${replica}`);
    const label = oneProcess ? 'server' : counts[name] > 1 ? `${name}-${replica + 1}` : name;
    const logFile = join(dataDir, 'logs', `${label}.log`);
    const metricsPort = metricsPorts[name][replica];
    const metrics = metricsPort ? { METRICS_PORT: String(metricsPort), METRICS_HOST: LOOPBACK } : {};
    const child = spawnChild({
      name: label,
      command: process.execPath,
      args: [...NODE_FLAGS, ...(options.nodeArgs ?? []), join(REPO_ROOT, oneProcess ? ONE_PROCESS_ENTRY : ENTRY[name])],
      env: {
        ...common,
        ...(oneProcess ? oneProcessEnv() : envOf[name]),
        PORT: String(port),
        ...metrics,
        ...(oneProcess ? {} : options.processEnv?.[name]),
      },
      logFile,
      echo,
    });
    const own = `http://${LOOPBACK}:${port}`;
    const metricsUrl = metricsPort ? `http://${LOOPBACK}:${metricsPort}/metrics` : undefined;
    const started: SystemProcess = { name, replica, logFile, port, url: own, metricsUrl, child };
    for (const kind of oneProcess ? PROCESSES : [name]) {
      replicas[kind][replica] = started;
      if (replica === 0) processes[kind] = started;
    }
    await waitFor(label, () => httpOk(`${own}/healthz`), { child });
    // Started again behind the balancer: back once the balancer sends it requests again.
    const behind = balancer;
    if (behind) {
      await waitFor(`${label} in service`, async () => (await inService(behind))[name][replica] === true);
    }
    return started;
  };

  let balancer: RunningBalancer | undefined;
  /** Per kind, per replica: whether the balancer's checks pass and it gets requests. */
  const inService = async (b: RunningBalancer) => {
    const stats = await b.stats();
    return Object.fromEntries(PROCESSES.map((name) => [name, (stats[name] ?? []).map((r) => r.up)])) as Record<
      ProcessName,
      boolean[]
    >;
  };
  const stop = async () => {
    const children = new Set(PROCESSES.flatMap((name) => replicas[name].map((p) => p.child)));
    await Promise.all([...children].map((child) => child.stop()));
    await balancer?.stop();
    await ownBus?.stop();
  };
  const all = (name: ProcessName) => Promise.all(replicaPorts[name].map((_, i) => start(name, i)));

  try {
    if (!oneProcess) await Promise.all(SERVICES.map(all));
    await all('gateway');
    // Last, when every replica answers: HAProxy counts a server in service from the start, and
    // one that refused its first checks would be out of it for seconds after it came up.
    if (balanced) {
      const started = await startBalancer({ dataDir, kinds });
      balancer = started;
      await waitFor('every replica in service', async () =>
        Object.values(await inService(started)).every((up) => up.every(Boolean)),
      );
    }
    await systemReady(gatewayUrl);
  } catch (err) {
    await stop();
    throw err;
  }
  return { gatewayUrl, processes, replicas, balancer, busUrl, start, stop };
}
