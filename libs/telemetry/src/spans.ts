/**
 * The spans, made at our own four boundaries rather than by OpenTelemetry's instrumentation
 * packages: requests received, requests sent, database operations and storage calls.
 *
 * Measured in `npm run bench`, the packages took a third of a hop's throughput whether a trace was
 * sampled or not: the http one wraps every request's emitters and computes its attributes before
 * the sampler is asked, and the MongoDB one serialises every command for its statement attribute.
 *
 * Here a trace that is not sampled costs one sampling decision, where it starts (at the gateway,
 * or wherever a request comes without trace context). Under a parent whose trace was not sampled,
 * no span is made at all and the parent's context is carried on as it is, flags included: the
 * decision every parent-based sampler (the SDK's default) would take, without the objects. Nor is
 * a call span made outside any trace (a background timer's queries), where it would be a root of
 * its own.
 *
 * A server span continues the caller's W3C trace context (`traceparent`), and is named after the
 * route's template once the router has matched it. A client span is started by whoever sends the
 * request, under the context it was asked in, and carries that context onwards in the headers it
 * gives. A call span is one operation on a dependency that is not HTTP to us (the database, the
 * storage's SDK), under the context it was asked in.
 */
import type { IncomingHttpHeaders } from 'node:http';
import {
  type Attributes,
  type Context,
  context,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import { tracingOn } from './tracing';

let cached: Tracer | undefined;
const tracer = () => {
  cached ??= trace.getTracer('@cs/telemetry');
  return cached;
};

/** Whether `parent` holds a span whose trace was not sampled: nothing under it is recorded. */
function unsampled(parent: Context): boolean {
  const span = trace.getSpan(parent);
  return span !== undefined && (span.spanContext().traceFlags & TraceFlags.SAMPLED) === 0;
}

export interface ServerSpan {
  /** The context to run the request's handling in: the span, under the caller's trace. */
  readonly context: Context;
  /** Ends the span with the answer's status, named after the route (`GET /api/posts/:id`) if one matched. */
  end(status: number, route?: string): void;
}

const noop = () => {};

/** Tracing off: no span, and no context to carry. */
const UNTRACED: ServerSpan = { context: ROOT_CONTEXT, end: noop };

/** Health probes: not requests anyone wants a trace of, whoever sends them. */
const PROBES = new Set(['/healthz', '/readyz']);

/** A span for one request received, or none when tracing is off or the request is a probe. */
export function startServerSpan(method: string, path: string, headers: IncomingHttpHeaders): ServerSpan {
  if (!tracingOn() || PROBES.has(path)) return UNTRACED;
  const parent = propagation.extract(ROOT_CONTEXT, headers);
  if (unsampled(parent)) return { context: parent, end: noop };
  const span = tracer().startSpan(method, { kind: SpanKind.SERVER }, parent);
  if (span.isRecording()) span.setAttributes({ 'http.request.method': method, 'url.path': path });
  return {
    context: trace.setSpan(parent, span),
    end(status, route) {
      if (span.isRecording()) {
        span.setAttribute('http.response.status_code', status);
        if (route) {
          span.setAttribute('http.route', route);
          span.updateName(`${method} ${route}`);
        }
        if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      }
      span.end();
    },
  };
}

export interface ClientSpan {
  /** The headers that carry the span's context to the server: set them on the request. */
  readonly headers: Record<string, string>;
  /** Ends the span with the answer's status, or with the error that stopped the request. */
  end(outcome: number | Error): void;
}

const NO_CLIENT_SPAN: ClientSpan = { headers: {}, end: noop };

/**
 * A span for one request sent to `url`, named `name`, under `parent` (by default, the context it is
 * asked in). Tracing off, or outside any trace (a background timer's call), there is nothing to
 * send or end; in a trace not sampled, only its context to send. Ending it twice ends it once.
 */
export function startClientSpan(method: string, url: string, name: string, parent = context.active()): ClientSpan {
  if (!tracingOn() || trace.getSpan(parent) === undefined) return NO_CLIENT_SPAN;
  const headers: Record<string, string> = {};
  if (unsampled(parent)) {
    propagation.inject(parent, headers);
    return { headers, end: noop };
  }
  const span = tracer().startSpan(name, { kind: SpanKind.CLIENT }, parent);
  if (span.isRecording()) {
    const { hostname, port, protocol } = new URL(url);
    span.setAttributes({
      'http.request.method': method,
      'server.address': hostname,
      'server.port': Number(port) || (protocol === 'https:' ? 443 : 80),
      'url.full': url,
    });
  }
  propagation.inject(trace.setSpan(parent, span), headers);
  let ended = false;
  return {
    headers,
    end(outcome) {
      if (ended) return;
      ended = true;
      if (span.isRecording()) recordOutcome(span, outcome);
      span.end();
    },
  };
}

function recordOutcome(span: Span, outcome: number | Error): void {
  if (typeof outcome === 'number') {
    span.setAttribute('http.response.status_code', outcome);
    if (outcome >= 400) span.setStatus({ code: SpanStatusCode.ERROR });
    return;
  }
  span.recordException(outcome);
  span.setAttribute('error.type', (outcome as NodeJS.ErrnoException).code ?? outcome.name);
  span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.message });
}

export interface CallSpan {
  /** Ends the span, failed if the call threw `error`. */
  end(error?: unknown): void;
}

/**
 * A span for one call to a dependency, named `name`, under the request's span it is asked in; its
 * attributes are computed only for a span that is sampled. Tracing off, outside any trace, or in
 * one not sampled, there is no span: callers then skip their own bookkeeping for it too.
 */
export function startCallSpan(name: string, attributes: () => Attributes): CallSpan | undefined {
  if (!tracingOn()) return undefined;
  const parent = context.active();
  if (trace.getSpan(parent) === undefined || unsampled(parent)) return undefined;
  const span = tracer().startSpan(name, { kind: SpanKind.CLIENT }, parent);
  if (span.isRecording()) span.setAttributes(attributes());
  return {
    end(error) {
      if (error !== undefined && span.isRecording()) {
        const err = error instanceof Error ? error : new Error(String(error));
        span.recordException(err);
        span.setAttribute('error.type', err.name);
        span.setStatus({ code: SpanStatusCode.ERROR, message: err.message });
      }
      span.end();
    },
  };
}

/** A `fetch` of the shape of the global one: how a process calls its services. */
export type Fetch = (url: string, init?: RequestInit) => Promise<Response>;

/**
 * `fetch`, each call in a client span of its own, whose context the request carries to the server
 * (`traceparent`): for calls between our services. The span ends when the answer's headers arrive.
 */
export function traced(fetch: Fetch): Fetch {
  return async (url, init = {}) => {
    const method = init.method ?? 'GET';
    const span = startClientSpan(method, url, method);
    try {
      const headers = new Headers(init.headers);
      for (const [name, value] of Object.entries(span.headers)) headers.set(name, value);
      const res = await fetch(url, { ...init, headers });
      span.end(res.status);
      return res;
    } catch (err) {
      span.end(err instanceof Error ? err : new Error(String(err)));
      throw err;
    }
  };
}
