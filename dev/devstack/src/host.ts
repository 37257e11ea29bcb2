/**
 * `npm start`'s one process: every part (server/src/all.ts) runs in the launcher itself, beside
 * the servers it started, so that the system is one Node process and not two (the launcher alone
 * took 25 MB PSS, idle). The parts get the environment the spawned one process would get
 * (`environments`), and log to `<dataDir>/logs/server.log`, as it did.
 */
import { createWriteStream, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { inProcessUrl } from '@cs/lifecycle';
import { startAll } from '@cs/server/all';
import { freePort } from './process';
import { environments, type SystemOptions, systemReady } from './system';

export interface HostedSystem {
  gatewayUrl: string;
  /** The one process's metrics, when asked for. */
  metricsUrl?: string;
  logFile: string;
  /** Drains the gateway and closes every part; this process goes on. */
  stop(): Promise<void>;
}

/** Every part in this process, ready (the gateway's /readyz answers 200) when it resolves. */
export async function hostSystem(options: SystemOptions & { busUrl: string }): Promise<HostedSystem> {
  const LOOPBACK = '127.0.0.1';
  const gatewayPort = options.gatewayPort ?? (await freePort());
  const metricsPort = options.metrics ? await freePort() : undefined;
  const { common, oneProcessEnv } = environments(options, {
    url: inProcessUrl,
    gatewayPort,
    busUrl: options.busUrl,
    balanced: false,
  });
  // As a process of its own would have it: read where the parts read it (NODE_ENV by Express as
  // the gateway's app is made, OTEL_* by the tracing SDK), not only where they are told.
  const env = {
    ...common,
    ...oneProcessEnv(),
    PORT: String(gatewayPort),
    ...(metricsPort ? { METRICS_PORT: String(metricsPort), METRICS_HOST: LOOPBACK } : {}),
  };
  for (const [key, value] of Object.entries(env)) {
    if (value === undefined) delete process.env[key];
    else process.env[key] = value;
  }

  const logFile = join(options.dataDir, 'logs', 'server.log');
  mkdirSync(join(options.dataDir, 'logs'), { recursive: true });
  const log = createWriteStream(logFile, { flags: 'a' });
  const closeLog = () => new Promise<void>((resolve) => log.end(resolve));
  const running = await startAll(process.env, { handleSignals: false, logTo: log }).catch(async (err: unknown) => {
    await closeLog();
    throw new Error(`the system could not start; see ${logFile}`, { cause: err });
  });
  const stop = async () => {
    await running.close();
    await closeLog();
  };

  const gatewayUrl = `http://${LOOPBACK}:${gatewayPort}`;
  try {
    await systemReady(gatewayUrl);
  } catch (err) {
    await stop();
    throw err;
  }
  return { gatewayUrl, metricsUrl: running.metricsUrl, logFile, stop };
}
