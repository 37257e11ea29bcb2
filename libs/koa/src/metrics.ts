import { httpRequestDuration, statusClass } from '@cs/telemetry';
import { trace } from '@opentelemetry/api';
import type { AppMiddleware } from './context';

/** The route template the router matched, or undefined when none did. */
function matchedRoute(ctx: object): string | undefined {
  const route = (ctx as { _matchedRoute?: string | RegExp })._matchedRoute;
  return typeof route === 'string' ? route : undefined;
}

/**
 * Names the request's server span after its route template (`GET /api/posts/:id`), when tracing
 * is on (else no span is active). One attribute on the span the http instrumentation made: Koa's
 * own instrumentation would add a span per router layer, five for a note's creation.
 */
export function nameSpan(): AppMiddleware {
  return async function nameSpan(ctx, next) {
    const span = trace.getActiveSpan();
    try {
      await next();
    } finally {
      const route = span && matchedRoute(ctx);
      if (span && route) {
        span.setAttribute('http.route', route);
        span.updateName(`${ctx.method} ${route}`);
      }
    }
  };
}

/**
 * Times every request into `http_server_request_duration_seconds`, labelled by the route's
 * template as the router matched it (`/api/posts/:id`), never by its path: a request no route
 * matched is `unmatched`, whatever its path was.
 */
export function httpMetrics(): AppMiddleware {
  const duration = httpRequestDuration();
  return async function httpMetrics(ctx, next) {
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      duration.observe(
        {
          method: ctx.method,
          route: matchedRoute(ctx) ?? 'unmatched',
          // The error handler below has set the status of a thrown error by now.
          status_class: statusClass(ctx.status),
        },
        Number(process.hrtime.bigint() - started) / 1e9,
      );
    }
  };
}
