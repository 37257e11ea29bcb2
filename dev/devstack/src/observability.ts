/**
 * The operator's side, as real servers: Prometheus (Debian's package) scraping a running system's
 * metrics ports, and Jaeger (v2, built by scripts/install-tools.sh from the Go module proxy)
 * receiving its spans over OTLP. Each listens on loopback ports of its own, so several can run
 * beside `npm start` and each other.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, httpOk, REPO_ROOT, spawnChild, waitFor } from './process';
import type { RunningServer } from './servers';
import { TOOLS_BIN } from './servers';

export interface RunningJaeger extends RunningServer {
  /** Where OTLP over HTTP goes: `OTEL_EXPORTER_OTLP_ENDPOINT`. */
  otlpUrl: string;
  /** Its query API (`/api/traces/<trace id>`, `/api/services`). */
  queryUrl: string;
}

/** Builds Jaeger when it is missing (first run only: about four minutes). */
export function ensureJaeger(): string {
  const binary = join(TOOLS_BIN, 'jaeger');
  if (!existsSync(binary)) {
    execFileSync('bash', [join(REPO_ROOT, 'scripts', 'install-tools.sh'), 'jaeger'], { stdio: 'inherit' });
  }
  return binary;
}

/**
 * Jaeger all-in-one with in-memory storage, receiving OTLP over HTTP only. Jaeger v2 is an
 * OpenTelemetry Collector: the configuration names the receiver, the storage and the query
 * extension, each on a port chosen here.
 */
export async function startJaeger({ dataDir }: { dataDir: string }): Promise<RunningJaeger> {
  const binary = ensureJaeger();
  const dir = join(dataDir, 'jaeger');
  mkdirSync(dir, { recursive: true });
  const [otlp, query, queryGrpc] = [await freePort(), await freePort(), await freePort()];
  const config = join(dir, 'config.yaml');
  writeFileSync(
    config,
    `service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
extensions:
  jaeger_storage:
    backends:
      memory_store:
        memory:
          max_traces: 100000
  jaeger_query:
    storage:
      traces: memory_store
    http:
      endpoint: 127.0.0.1:${query}
    grpc:
      endpoint: 127.0.0.1:${queryGrpc}
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:${otlp}
processors:
  batch:
    timeout: 100ms
exporters:
  jaeger_storage_exporter:
    trace_storage: memory_store
`,
  );
  const child = spawnChild({
    name: 'jaeger',
    command: binary,
    args: ['--config', config],
    logFile: join(dataDir, 'logs', 'jaeger.log'),
  });
  const queryUrl = `http://127.0.0.1:${query}`;
  await waitFor('jaeger', () => httpOk(`${queryUrl}/api/services`), { child }).catch(async (err) => {
    await child.stop();
    throw err;
  });
  return {
    kind: 'Jaeger v1.76.0 (v2 all-in-one)',
    url: queryUrl,
    otlpUrl: `http://127.0.0.1:${otlp}`,
    queryUrl,
    child,
    port: query,
    stop: async () => void (await child.stop()),
  };
}

/** Debian's Prometheus, or the one PROMETHEUS_PATH names. */
export function prometheusBinary(): string {
  const binary = process.env.PROMETHEUS_PATH ?? '/usr/bin/prometheus';
  if (!existsSync(binary)) {
    throw new Error(`Prometheus is not at ${binary}: run scripts/install-debian.sh prometheus, or set PROMETHEUS_PATH`);
  }
  return binary;
}

export interface PrometheusOptions {
  dataDir: string;
  /** Each job's targets: `{ notes: ['http://127.0.0.1:9464/metrics'] }`. */
  targets: Record<string, string[]>;
  scrapeIntervalSeconds?: number;
  /** Rule files to load (evaluated at the scrape interval): `ops/alerts.yml`. */
  ruleFiles?: string[];
}

/** Prometheus scraping the given targets, with its own storage under `dataDir`. */
export async function startPrometheus({
  dataDir,
  targets,
  scrapeIntervalSeconds = 1,
  ruleFiles = [],
}: PrometheusOptions): Promise<RunningServer> {
  const binary = prometheusBinary();
  const dir = join(dataDir, 'prometheus');
  mkdirSync(join(dir, 'data'), { recursive: true });
  const jobs = Object.entries(targets).map(([job, urls]) => {
    const parsed = urls.map((u) => new URL(u));
    const path = parsed[0]?.pathname ?? '/metrics';
    return `  - job_name: ${job}
    metrics_path: ${path}
    static_configs:
      - targets: [${parsed.map((u) => `'${u.host}'`).join(', ')}]`;
  });
  const config = join(dir, 'prometheus.yml');
  writeFileSync(
    config,
    `global:
  scrape_interval: ${scrapeIntervalSeconds}s
  scrape_timeout: ${Math.round(scrapeIntervalSeconds * 900)}ms
  evaluation_interval: ${scrapeIntervalSeconds}s
rule_files: [${ruleFiles.map((f) => `'${f}'`).join(', ')}]
scrape_configs:
${jobs.join('\n')}
`,
  );
  const port = await freePort();
  const child = spawnChild({
    name: 'prometheus',
    command: binary,
    args: [
      `--config.file=${config}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    logFile: join(dataDir, 'logs', 'prometheus.log'),
  });
  const url = `http://127.0.0.1:${port}`;
  await waitFor('prometheus', () => httpOk(`${url}/-/ready`), { child }).catch(async (err) => {
    await child.stop();
    throw err;
  });
  return { kind: 'Prometheus (Debian)', url, child, port, stop: async () => void (await child.stop()) };
}
