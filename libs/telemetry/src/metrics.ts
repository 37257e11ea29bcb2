/**
 * Prometheus metrics (prom-client), one registry a process. Metrics are on when the process is
 * given a METRICS_PORT: then `enableMetrics` turns on what has a cost per request (the HTTP
 * histogram, the database's command events) and `serveMetrics` answers scrapes on that port, a
 * listener of its own that the public port never reaches. Off, nothing is measured per request.
 *
 * Labels are bounded by construction: a route's template (never its path), a status class, an
 * operation's name, an upstream's name, an error's kind. Nothing a caller sends becomes a label.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Counter, collectDefaultMetrics, Gauge, Histogram, register } from 'prom-client';

let enabled = false;

/** Turns metrics on for this process: before the app is built, which asks `metricsEnabled`. */
export function enableMetrics(service: string): void {
  if (enabled) return;
  enabled = true;
  register.setDefaultLabels({ service });
  // Event-loop delay, heap by space, GC pauses by kind, CPU, handles, memory.
  collectDefaultMetrics({ register, eventLoopMonitoringPrecision: 20 });
}

export function metricsEnabled(): boolean {
  return enabled;
}

/** Buckets for request and call latencies, in seconds: 2.5 ms to 10 s. */
export const LATENCY_BUCKETS = [0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

type Labels<L extends string> = Partial<Record<L, string | number>>;

/**
 * Get-or-create, so a module can declare its metric where it is used, and a test process that
 * builds several apps registers each metric once.
 */
function existing<M>(name: string): M | undefined {
  return register.getSingleMetric(name) as M | undefined;
}

export function counter<L extends string>(name: string, help: string, labelNames: readonly L[] = []): Counter<L> {
  return existing<Counter<L>>(name) ?? new Counter({ name, help, labelNames, registers: [register] });
}

export function histogram<L extends string>(
  name: string,
  help: string,
  labelNames: readonly L[] = [],
  buckets = LATENCY_BUCKETS,
): Histogram<L> {
  return existing<Histogram<L>>(name) ?? new Histogram({ name, help, labelNames, buckets, registers: [register] });
}

/**
 * A gauge read at scrape time. `read` may ask the database; it is given a second, after which
 * the scrape goes on without it (the gauge keeps its last value), so a slow database never makes
 * Prometheus time out on the whole process.
 */
export function sampledGauge<L extends string>(
  name: string,
  help: string,
  labelNames: readonly L[],
  read: (set: (labels: Labels<L>, value: number) => void) => Promise<void> | void,
): Gauge<L> {
  const found = existing<Gauge<L>>(name);
  if (found) return found;
  return new Gauge({
    name,
    help,
    labelNames,
    registers: [register],
    async collect() {
      const set = (labels: Labels<L>, value: number) => this.set(labels, value);
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.resolve(read(set)).catch(() => undefined),
        new Promise((resolve) => {
          timer = setTimeout(resolve, 1000);
        }),
      ]);
      clearTimeout(timer);
    },
  });
}

/** `2xx`, `4xx`…: the label requests are counted by. */
export function statusClass(status: number): string {
  return `${Math.floor(status / 100)}xx`;
}

/**
 * Every app's request histogram: `_count` is the number of requests, by the app that answered
 * (`service`: the gateway, posts…, also when one process runs them all), route and class.
 */
export function httpRequestDuration(): Histogram<'service' | 'method' | 'route' | 'status_class'> {
  return histogram(
    'http_server_request_duration_seconds',
    'Time from the request to the end of the answer, by app, route template and status class. Its _count counts requests.',
    ['service', 'method', 'route', 'status_class'],
  );
}

export interface MetricsServer {
  url: string;
  close(): Promise<void>;
}

/** Serves `GET /metrics` (Prometheus text format) and nothing else, on its own listener. */
export async function serveMetrics({ port, host }: { port: number; host: string }): Promise<MetricsServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (req.method !== 'GET' || path !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Not found\n');
      return;
    }
    register.metrics().then(
      (text) => res.writeHead(200, { 'content-type': register.contentType }).end(text),
      (err: unknown) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`${String(err)}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject).listen(port, host, () => resolve());
  });
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${bound}/metrics`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/**
 * A server's metrics from its configuration: off when METRICS_PORT is 0; else on, and served.
 * Called before the app is built, so what the app builds knows metrics are on.
 */
export async function startMetrics(
  service: string,
  config: { METRICS_PORT: number; METRICS_HOST: string },
): Promise<MetricsServer | undefined> {
  if (config.METRICS_PORT === 0) return undefined;
  enableMetrics(service);
  return serveMetrics({ port: config.METRICS_PORT, host: config.METRICS_HOST });
}

/**
 * An outbox's backlog, read at scrape time: its entries, and the age of the oldest. Both stay at
 * zero while deliveries keep up; a depth that grows, or an age past a few retry intervals, means
 * the receiver is away. Registered only with metrics on (it holds the reader of one process).
 */
export function watchOutbox(outbox: string, read: () => Promise<{ entries: number; oldest?: Date }>): void {
  if (!metricsEnabled()) return;
  let last: { entries: number; oldest?: Date } | undefined;
  // One read serves both gauges of one scrape.
  let reading: Promise<void> | undefined;
  const refresh = () => {
    reading ??= read()
      .then((found) => {
        last = found;
      })
      .finally(() => {
        reading = undefined;
      });
    return reading;
  };
  sampledGauge('outbox_entries', 'Entries waiting in an outbox, by outbox.', ['outbox'], async (set) => {
    await refresh();
    if (last) set({ outbox }, last.entries);
  });
  sampledGauge(
    'outbox_oldest_entry_age_seconds',
    'Age of the oldest entry waiting in an outbox (0 when it is empty), by outbox.',
    ['outbox'],
    async (set) => {
      await refresh();
      if (last) set({ outbox }, last.oldest ? Math.max(0, (Date.now() - last.oldest.getTime()) / 1000) : 0);
    },
  );
}
