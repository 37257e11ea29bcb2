/**
 * Every part in this process (SERVICES=all): each service hosted at `http://<name>.in-process`
 * (@cs/lifecycle in-process.ts), and the gateway listening on PORT. `main.ts` runs it as the
 * process's whole work, also under `npm start`, whose launcher runs main.ts as its child and
 * starts it again when it dies (dev/devstack supervisor.ts).
 *
 * In one process each service is still what it is alone: its own configuration, read by its own
 * reader, its own database, its own logger. One thing they share: the process checks tokens with
 * one verifier, following identity's revocation log once for every part (each would otherwise
 * poll it every second, for the same list), given to every part whose JWT_SECRET and IDENTITY_URL
 * are the gateway's; a part configured apart keeps one of its own.
 * Their configuration comes from the one environment: a key for one service alone is written with
 * its name first (`POSTS_LOG_LEVEL` is posts' LOG_LEVEL), and MONGO_URL names the server, on which
 * each service has its own database, named after it (`POSTS_MONGO_URL` to set one exactly). The
 * services whose databases are on one server reach them through one client (databases.ts).
 */
import { verifierFollowing } from '@cs/auth';
import { configOrExit } from '@cs/config';
import { filesService } from '@cs/files/service';
import { readConfig as readGatewayConfig } from '@cs/gateway/config';
import { startGateway } from '@cs/gateway/gateway';
import { identityService } from '@cs/identity/service';
import { hostInProcess, inProcessUrl, runServer } from '@cs/lifecycle';
import { createLogger } from '@cs/log';
import { withDatabase } from '@cs/mongo/database-url';
import { notesService } from '@cs/notes/service';
import { postsService } from '@cs/posts/service';
import { realtimeService } from '@cs/realtime/service';
import { type BaseConfig, type ServiceDefinition, type StartedService, startService } from '@cs/service';
import { startMetrics, startTracing, stopTracing } from '@cs/telemetry';
import { connectServers } from './databases';

// biome-ignore lint/suspicious/noExplicitAny: each definition has its own config type
export const SERVICES: readonly ServiceDefinition<any>[] = [
  identityService,
  postsService,
  notesService,
  filesService,
  realtimeService,
];

/** The environment of one part: the common keys, its own (`POSTS_X` as X), and where the others are. */
function environmentOf(name: string, env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const prefix = `${name.toUpperCase()}_`;
  const own = Object.fromEntries(
    Object.entries(env)
      .filter(([key]) => key.startsWith(prefix) && key.length > prefix.length)
      .map(([key, value]) => [key.slice(prefix.length), value]),
  );
  const addresses = Object.fromEntries(SERVICES.map((s) => [`${s.name.toUpperCase()}_URL`, inProcessUrl(s.name)]));
  const database =
    name !== 'gateway' && env.MONGO_URL && own.MONGO_URL === undefined
      ? { MONGO_URL: withDatabase(env.MONGO_URL, name) }
      : {};
  return { ...env, ...own, ...database, ...addresses };
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
  const configs = SERVICES.map((s) => configOrExit(s.name, s.readConfig, environmentOf(s.name, env)) as BaseConfig);
  const gatewayConfig = configOrExit('gateway', readGatewayConfig, environmentOf('gateway', env));
  const logger = createLogger({ name: 'gateway', level: gatewayConfig.LOG_LEVEL });
  const started: StartedService[] = [];
  const hosted: { stop(): void }[] = [];
  /** The process's one token verifier, following identity's revocation log for every part. */
  let tokens: ReturnType<typeof verifierFollowing> | undefined;
  try {
    startTracing('content-service');
    const metrics = await startMetrics('content-service', gatewayConfig);
    if (metrics) logger.info({ url: metrics.url }, 'metrics served');
    const servers = await connectServers(configs, createLogger({ name: 'database', level: gatewayConfig.LOG_LEVEL }));
    tokens = verifierFollowing(gatewayConfig.IDENTITY_URL, gatewayConfig.JWT_SECRET, logger);
    const shared = tokens.verifier;
    const sharing = (config: BaseConfig & { JWT_SECRET?: string; IDENTITY_URL?: string }) =>
      config.JWT_SECRET === gatewayConfig.JWT_SECRET && config.IDENTITY_URL === gatewayConfig.IDENTITY_URL;
    await Promise.all(
      SERVICES.map(async (definition, i) => {
        const config = configs[i] as BaseConfig;
        const service = await startService(
          definition,
          config,
          createLogger({ name: definition.name, level: config.LOG_LEVEL }),
          { database: servers.databases[i], tokens: sharing(config) ? shared : undefined },
        );
        started.push(service);
        hosted.push(hostInProcess(definition.name, service.app.callback()));
      }),
    );
    const gateway = startGateway(gatewayConfig, logger, shared);
    const server = await runServer({
      app: gateway.app,
      port: gatewayConfig.PORT,
      host: gatewayConfig.HOST,
      logger,
      handleSignals,
      configure: gateway.configure,
      onClosing: () => {
        for (const service of started) service.onClosing?.();
      },
      onClose: async () => {
        await gateway.close();
        await Promise.all(started.map((service) => service.close()));
        tokens?.stop();
        await servers.close();
        for (const host of hosted) host.stop();
        await metrics?.close();
        await stopTracing();
      },
    });
    return { port: server.port, metricsUrl: metrics?.url, close: server.close };
  } catch (err) {
    tokens?.stop();
    logger.fatal({ err }, 'could not start');
    throw err;
  }
}
