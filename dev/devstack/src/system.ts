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
import { type BalancedKind, type RunningBalancer, startBalancer } from './balancer';
import { environments } from './part-environments';
import { ENTRY, NODE_FLAGS, ONE_PROCESS_ENTRY, PROCESSES, type ProcessName, SERVICES } from './parts';
import { type Child, freePort, httpAnswer, httpOk, REPO_ROOT, spawnChild, waitFor } from './process';
import { type RunningServer, startRedis } from './servers';
import type { SystemOptions } from './system-options';

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
