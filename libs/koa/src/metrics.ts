import { httpRequestDuration, statusClass } from '@cs/telemetry';
import type { AppMiddleware } from './context';

/** The route template the router matched, or undefined when none did. */
export function matchedRoute(ctx: object): string | undefined {
  const route = (ctx as { _matchedRoute?: string | RegExp })._matchedRoute;
  return typeof route === 'string' ? route : undefined;
}

/**
 * Times every request into `http_server_request_duration_seconds`, labelled by the route's
 * template as the router matched it (`/api/posts/:id`), never by its path: a request no route
 * matched is `unmatched`, whatever its path was.
 */
export function httpMetrics(service: string): AppMiddleware {
  const duration = httpRequestDuration();
  return async function httpMetrics(ctx, next) {
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      duration.observe(
        {
          service,
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
