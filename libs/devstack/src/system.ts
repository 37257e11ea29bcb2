/**
 * The whole system as real processes: the four services and the gateway, each started from its
 * built `dist/src/server.js` with the environment it would get in production.
 */
import { join } from 'node:path';
import type { StorageSettings } from '@cs/storage';
import { type Child, freePort, httpOk, REPO_ROOT, spawnChild, waitFor } from './process';
import { withDatabase } from './servers';

export const SERVICES = ['identity', 'posts', 'notes', 'files'] as const;
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
}

export interface SystemProcess {
  name: ProcessName;
  /** Where its stdout and stderr go. */
  logFile: string;
  port: number;
  url: string;
  /** Its `/metrics`, when metrics are on. */
  metricsUrl?: string;
  child: Child;
}

export interface RunningSystem {
  gatewayUrl: string;
  processes: Record<ProcessName, SystemProcess>;
  /** Starts a process again on its port (after a stop or a kill), and waits until it is healthy. */
  start(name: ProcessName): Promise<SystemProcess>;
  stop(): Promise<void>;
}

/**
 * Node's flags for every process, as the Dockerfile sets them (NODE_OPTIONS). Node 24 lets V8
 * grow the young generation to suit the machine, and under steady load each process's RSS then
 * climbed by 50-100 MB in steps while its live heap stayed at 15-30 MB (bench/results/soak.md).
 * A cap keeps RSS flat. Both semi-spaces of the young generation end up resident, so the cap is
 * memory every process keeps: at 8 MB (against Node's long-standing 16) the five processes took
 * 15 MB less at idle and 35 MB less after load, at the same throughput (1,800 reads a second by
 * id through the gateway, three rounds each, interleaved).
 */
export const NODE_FLAGS = ['--max-semi-space-size=8'];

const ENTRY: Record<ProcessName, string> = {
  identity: 'services/identity/dist/src/server.js',
  posts: 'services/posts/dist/src/server.js',
  notes: 'services/notes/dist/src/server.js',
  files: 'services/files/dist/src/server.js',
  gateway: 'gateway/dist/src/server.js',
};

export async function startSystem(options: SystemOptions): Promise<RunningSystem> {
  const { dataDir, mongoUrl, storage, jwtSecret, dbPrefix = '', echo = false } = options;
  const ports = {} as Record<ProcessName, number>;
  for (const name of SERVICES) ports[name] = await freePort();
  ports.gateway = options.gatewayPort ?? (await freePort());
  const metricsPorts: Partial<Record<ProcessName, number>> = {};
  if (options.metrics) for (const name of [...SERVICES, 'gateway'] as const) metricsPorts[name] = await freePort();
  const url = (name: ProcessName) => `http://127.0.0.1:${ports[name]}`;
  const gatewayUrl = url('gateway');
  const frontendOrigin = options.frontendOrigin ?? `http://localhost:${ports.gateway}`;
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
  // Only the gateway, with its rate limits and token checks, is reachable from other machines: a
  // service called directly would skip both.
  const LOOPBACK = '127.0.0.1';
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
    posts: { HOST: LOOPBACK, MONGO_URL: withDatabase(mongoUrl, `${dbPrefix}posts`) },
    notes: { HOST: LOOPBACK, MONGO_URL: withDatabase(mongoUrl, `${dbPrefix}notes`), FILES_URL: url('files') },
    files: {
      HOST: LOOPBACK,
      MONGO_URL: withDatabase(mongoUrl, `${dbPrefix}files`),
      S3_ENDPOINT: storage.endpoint,
      S3_PUBLIC_ENDPOINT: storage.publicEndpoint ?? storage.endpoint,
      S3_ACCESS_KEY_ID: storage.accessKeyId,
      S3_SECRET_ACCESS_KEY: storage.secretAccessKey,
      STORAGE_BUCKET: storage.bucket,
      STORAGE_REGION: storage.region,
    },
    gateway: {
      HOST: options.gatewayHost ?? '0.0.0.0',
      IDENTITY_URL: url('identity'),
      POSTS_URL: url('posts'),
      NOTES_URL: url('notes'),
      FILES_URL: url('files'),
    },
  };

  const processes = {} as Record<ProcessName, SystemProcess>;
  const start = async (name: ProcessName): Promise<SystemProcess> => {
    const logFile = join(dataDir, 'logs', `${name}.log`);
    const metricsPort = metricsPorts[name];
    const metrics = metricsPort ? { METRICS_PORT: String(metricsPort), METRICS_HOST: LOOPBACK } : {};
    const child = spawnChild({
      name,
      command: process.execPath,
      args: [...NODE_FLAGS, ...(options.nodeArgs ?? []), join(REPO_ROOT, ENTRY[name])],
      env: { ...common, ...envOf[name], PORT: String(ports[name]), ...metrics, ...options.processEnv?.[name] },
      logFile,
      echo,
    });
    const metricsUrl = metricsPort ? `http://${LOOPBACK}:${metricsPort}/metrics` : undefined;
    processes[name] = { name, logFile, port: ports[name], url: url(name), metricsUrl, child };
    await waitFor(name, () => httpOk(`${url(name)}/healthz`), { child });
    return processes[name];
  };

  const stop = async () => {
    await Promise.all(Object.values(processes).map((p) => p.child.stop()));
  };

  try {
    await Promise.all(SERVICES.map(start));
    await start('gateway');
    await waitFor('the system', () => httpOk(`${gatewayUrl}/readyz`), { timeoutMs: 30_000 });
  } catch (err) {
    await stop();
    throw err;
  }
  return { gatewayUrl, processes, start, stop };
}
