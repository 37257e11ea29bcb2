/**
 * OpenTelemetry traces, configured the standard way (`OTEL_*` variables: exporter, endpoint,
 * sampler, propagators, resource, read by the SDK) and off unless an exporter is configured:
 * `OTEL_EXPORTER_OTLP_ENDPOINT` (or its traces form) or `OTEL_TRACES_EXPORTER`. Off, the SDK is
 * never even loaded.
 *
 * On, a span covers each HTTP hop, server and client side, each database operation and each
 * storage call, and W3C trace context (`traceparent`) is sent on every call between our processes.
 * The spans are our own (`spans.ts`), made where the requests, the models and the S3 client are:
 * no instrumentation package patches any module. Only traces are exported: metrics are
 * Prometheus's (`metrics.ts`), and logs stay on stdout, carrying the trace id (`@cs/log`).
 */
type Env = Record<string, string | undefined>;

export function tracingConfigured(env: Env = process.env): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  const exporter = env.OTEL_TRACES_EXPORTER?.trim().toLowerCase();
  if (exporter === 'none') return false;
  return Boolean(exporter || env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim());
}

interface Tracing {
  shutdown(): Promise<void>;
}

let running: Tracing | undefined;

/** Whether this process makes spans: tracing is configured and the SDK has started. */
export function tracingOn(): boolean {
  return running !== undefined;
}

/**
 * Starts the SDK when tracing is configured, `service` naming the process unless
 * `OTEL_SERVICE_NAME` does. Servers call it first, before the app, its database connection and its
 * storage client are built: they ask `tracingOn` then.
 */
export function startTracing(service: string, env: Env = process.env): Tracing | undefined {
  if (running || !tracingConfigured(env)) return running;
  // Traces only, unless the operator asks for more.
  env.OTEL_LOGS_EXPORTER ??= 'none';
  env.OTEL_METRICS_EXPORTER ??= 'none';
  env.OTEL_SERVICE_NAME ??= service;
  // Loaded here, so a process without tracing never pays for the SDK's modules.
  const { NodeSDK } = require('@opentelemetry/sdk-node') as typeof import('@opentelemetry/sdk-node');

  // The SDK's context manager (AsyncLocalStorage), W3C propagator, sampler and batching OTLP
  // exporter; the spans are made by our own code.
  const sdk = new NodeSDK({ instrumentations: [] });
  sdk.start();
  running = { shutdown: () => sdk.shutdown() };
  return running;
}

/** Sends the spans still queued; servers call it after draining, before they exit. */
export async function stopTracing(): Promise<void> {
  await running?.shutdown().catch(() => undefined);
  running = undefined;
}
