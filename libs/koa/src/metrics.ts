import { httpRequestDuration, statusClass } from '@cs/telemetry';
import type { AppMiddleware } from './context';

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
      const route = (ctx as { _matchedRoute?: string | RegExp })._matchedRoute;
      duration.observe(
        {
          method: ctx.method,
          route: typeof route === 'string' ? route : 'unmatched',
          // The error handler below has set the status of a thrown error by now.
          status_class: statusClass(ctx.status),
        },
        Number(process.hrtime.bigint() - started) / 1e9,
      );
    }
  };
}
