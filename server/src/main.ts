/**
 * The gateway and every service in one Node process: how `npm start` runs the system, and how a
 * team runs it for good when one machine is enough. `SERVICES` chooses what this process runs:
 * - `all` (the default): everything. The gateway listens on PORT; each service is hosted at
 *   `http://<name>.in-process` (@cs/lifecycle in-process.ts), where the gateway, the services'
 *   calls to one another and the revocation feed reach it in memory, without a socket;
 * - one name (`posts`, `gateway`…): that part alone, as its own entry runs it
 *   (services/<name>/dist/src/server.js, gateway/dist/src/server.js), one container each in Compose.
 *
 * In one process each service is still what it is alone: its own configuration, read by its own
 * reader, its own database connection, its own token verifier following identity's log, its own
 * logger. Their configuration comes from the one environment: a key for one service alone is
 * written with its name first (`POSTS_LOG_LEVEL` is posts' LOG_LEVEL), and MONGO_URL names the
 * server, on which each service has its own database, named after it (`POSTS_MONGO_URL` to set
 * one exactly). What one process gives up: a crash in one part takes the others with it, and one
 * event loop serves them all.
 */
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
import { type BaseConfig, runService, type ServiceDefinition, type StartedService, startService } from '@cs/service';
import { startMetrics, startTracing, stopTracing } from '@cs/telemetry';

// biome-ignore lint/suspicious/noExplicitAny: each definition has its own config type
const SERVICES: readonly ServiceDefinition<any>[] = [
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

async function runAll(env: NodeJS.ProcessEnv): Promise<void> {
  // Every configuration first: a bad one stops the process before anything starts.
  const configs = SERVICES.map((s) => configOrExit(s.name, s.readConfig, environmentOf(s.name, env)) as BaseConfig);
  const gatewayConfig = configOrExit('gateway', readGatewayConfig, environmentOf('gateway', env));
  const logger = createLogger({ name: 'gateway', level: gatewayConfig.LOG_LEVEL });
  const started: StartedService[] = [];
  const hosted: { stop(): void }[] = [];
  try {
    startTracing('content-service');
    const metrics = await startMetrics('content-service', gatewayConfig);
    if (metrics) logger.info({ url: metrics.url }, 'metrics served');
    await Promise.all(
      SERVICES.map(async (definition, i) => {
        const config = configs[i] as BaseConfig;
        const service = await startService(
          definition,
          config,
          createLogger({ name: definition.name, level: config.LOG_LEVEL }),
        );
        started.push(service);
        hosted.push(hostInProcess(definition.name, service.app.callback()));
      }),
    );
    const gateway = startGateway(gatewayConfig, logger);
    await runServer({
      app: gateway.app,
      port: gatewayConfig.PORT,
      host: gatewayConfig.HOST,
      logger,
      configure: gateway.configure,
      onClosing: () => {
        for (const service of started) service.onClosing?.();
      },
      onClose: async () => {
        await gateway.close();
        await Promise.all(started.map((service) => service.close()));
        for (const host of hosted) host.stop();
        await metrics?.close();
        await stopTracing();
      },
    });
  } catch (err) {
    logger.fatal({ err }, 'could not start');
    process.exit(1);
  }
}

async function main(): Promise<void> {
  const target = (process.env.SERVICES ?? 'all').trim() || 'all';
  if (target === 'all') return runAll(process.env);
  const one = SERVICES.find((s) => s.name === target);
  if (one) return runService(one);
  if (target === 'gateway') {
    await import('@cs/gateway');
    return;
  }
  const names = ['all', ...SERVICES.map((s) => s.name), 'gateway'].join(', ');
  process.stderr.write(`SERVICES must be one of ${names} (got "${target}")\n`);
  process.exit(1);
}

void main();
