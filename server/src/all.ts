/**
 * Every part in one process: each service hosted in memory at `http://<name>.in-process`, and the
 * gateway listening on PORT. `main.ts` runs it as the process's whole work, also under `npm start`,
 * whose launcher runs main.ts as its child and starts it again when it dies (dev/devstack
 * supervisor.ts).
 *
 * Each part is started as it is in a process of its own (`startPart`, @cs/service), from the same
 * definition: its own configuration, read by its own reader, its own database, its own logger.
 * What the process gives them is passed to each, explicitly:
 * - how they reach one another (`HostedServices`, @cs/lifecycle): the gateway's proxy and the
 *   services' calls to one another go through HTTP over connections made in memory, to each
 *   service's own HTTP server, with no socket;
 * - one token verifier, following identity's revocation log once for every part (each would
 *   otherwise poll it every second, for the same list), given to every part whose JWT_SECRET and
 *   IDENTITY_URL are the gateway's; a part configured apart keeps one of its own;
 * - one database client for each server the services' databases are on (databases.ts).
 *
 * Their configuration comes from the one environment: a key for one part alone is written with
 * its name first (`POSTS_LOG_LEVEL` is posts' LOG_LEVEL), and MONGO_URL names the server, on which
 * each service has its own database, named after it (`POSTS_MONGO_URL` to set one exactly).
 */
import { verifierFollowing } from '@cs/auth';
import { configOrExit, FILE_SUFFIX, settingOf } from '@cs/config';
import { filesService } from '@cs/files/service';
import { gatewayPart } from '@cs/gateway/gateway';
import { identityService } from '@cs/identity/service';
import { HostedServices, inProcessUrl, runServer } from '@cs/lifecycle';
import { createLogger } from '@cs/log';
import { withDatabase } from '@cs/mongo/database-url';
import { notesService } from '@cs/notes/service';
import { postsService } from '@cs/posts/service';
import { realtimeService } from '@cs/realtime/service';
import { type BaseConfig, type PartDefinition, type StartedPart, startPart } from '@cs/service';
import { startMetrics, startTracing, stopTracing } from '@cs/telemetry';
import { connectServers } from './databases';

// biome-ignore lint/suspicious/noExplicitAny: each definition has its own config type
const SERVICES: readonly PartDefinition<any>[] = [
  identityService,
  postsService,
  notesService,
  filesService,
  realtimeService,
];

/**
 * The environment of one part: the common keys, its own (`POSTS_X` as X), and where the others are.
 * A key of its own, given either way (`POSTS_JWT_SECRET` or `POSTS_JWT_SECRET_FILE`), takes the
 * place of the common key given either way, so the two never count as one setting given twice.
 */
function environmentOf(name: string, env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const prefix = `${name.toUpperCase()}_`;
  const own = Object.fromEntries(
    Object.entries(env)
      .filter(([key]) => key.startsWith(prefix) && key.length > prefix.length)
      .map(([key, value]) => [key.slice(prefix.length), value]),
  );
  const settingOfKey = (key: string) => (key.endsWith(FILE_SUFFIX) ? key.slice(0, -FILE_SUFFIX.length) : key);
  const replaced = new Set(Object.keys(own).map(settingOfKey));
  const common = Object.fromEntries(Object.entries(env).filter(([key]) => !replaced.has(settingOfKey(key))));
  const addresses = Object.fromEntries(SERVICES.map((s) => [`${s.name.toUpperCase()}_URL`, inProcessUrl(s.name)]));
  // MONGO_URL names the server: each service gets its own database on it, given either way.
  const server = name !== 'gateway' && !replaced.has('MONGO_URL') ? settingOf(env, 'MONGO_URL') : undefined;
  const database = server ? { MONGO_URL: withDatabase(server, name), MONGO_URL_FILE: undefined } : {};
  return { ...common, ...own, ...database, ...addresses };
}

export interface AllOptions {
  /** Whether SIGTERM and SIGINT drain and exit the process (they do when it is the process's work). */
  handleSignals: boolean;
}

export interface RunningAll {
  /** Where the gateway listens. */
  port: number;
  /** The gateway's metrics, when METRICS_PORT asks for them. */
  metricsUrl?: string;
  /** Drains the gateway, then closes every service. */
  close(): Promise<void>;
}

/** Starts every part; a configuration that is wrong stops the process before anything starts. */
export async function startAll(env: NodeJS.ProcessEnv, { handleSignals }: AllOptions): Promise<RunningAll> {
  const configs = SERVICES.map(
    (s) => configOrExit(s.name, (source) => s.readConfig(environmentOf(s.name, source)), env) as BaseConfig,
  );
  const gatewayConfig = configOrExit(
    'gateway',
    (source) => gatewayPart.readConfig(environmentOf('gateway', source)),
    env,
  );
  const logger = createLogger({ name: 'gateway', level: gatewayConfig.LOG_LEVEL });
  const hosted = new HostedServices();
  const started: StartedPart[] = [];
  /** The process's one token verifier, following identity's revocation log for every part. */
  let tokens: ReturnType<typeof verifierFollowing> | undefined;
  try {
    startTracing('content-service');
    const metrics = await startMetrics('content-service', gatewayConfig);
    if (metrics) logger.info({ url: metrics.url }, 'metrics served');
    const servers = await connectServers(configs, createLogger({ name: 'database', level: gatewayConfig.LOG_LEVEL }));
    tokens = verifierFollowing({
      identityUrl: gatewayConfig.IDENTITY_URL,
      secret: gatewayConfig.JWT_SECRET,
      logger,
      fetch: hosted.fetch,
    });
    const shared = tokens.verifier;
    const sharing = (config: BaseConfig & { JWT_SECRET?: string; IDENTITY_URL?: string }) =>
      config.JWT_SECRET === gatewayConfig.JWT_SECRET && config.IDENTITY_URL === gatewayConfig.IDENTITY_URL;
    await Promise.all(
      SERVICES.map(async (definition, i) => {
        const config = configs[i] as BaseConfig;
        const service = await startPart(
          definition,
          config,
          createLogger({ name: definition.name, level: config.LOG_LEVEL }),
          {
            database: servers.databases[i],
            tokens: sharing(config) ? shared : undefined,
            reach: hosted,
          },
        );
        started.push(service);
        hosted.host(definition.name, service.app, { keepAliveTimeoutMs: service.keepAliveTimeoutMs });
      }),
    );
    const gateway = await startPart(gatewayPart, gatewayConfig, logger, { tokens: shared, reach: hosted });
    const server = await runServer({
      app: gateway.app,
      port: gatewayConfig.PORT,
      host: gatewayConfig.HOST,
      logger,
      handleSignals,
      configure: gateway.configure,
      keepAliveTimeoutMs: gateway.keepAliveTimeoutMs,
      onClosing: () => {
        for (const service of started) service.onClosing?.();
      },
      onClose: async () => {
        await gateway.close();
        await Promise.all(started.map((service) => service.close()));
        hosted.close();
        tokens?.stop();
        await servers.close();
        await metrics?.close();
        await stopTracing();
      },
    });
    return { port: server.port, metricsUrl: metrics?.url, close: server.close };
  } catch (err) {
    tokens?.stop();
    hosted.close();
    logger.fatal({ err }, 'could not start');
    throw err;
  }
}
