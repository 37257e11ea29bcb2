import { startServerSpan } from '@cs/telemetry';
import { context } from '@opentelemetry/api';
import type { AppMiddleware } from './context';
import { matchedRoute } from './metrics';

/**
 * Runs each request in a server span of its own, under the caller's trace, named after the route's
 * template (`GET /api/posts/:id`). Installed only when tracing is on.
 */
export function traceRequests(): AppMiddleware {
  return async function traceRequests(ctx, next) {
    const span = startServerSpan(ctx.method, ctx.path, ctx.headers);
    try {
      await context.with(span.context, next);
    } finally {
      // The error handler below has set the status of a thrown error by now.
      span.end(ctx.status, matchedRoute(ctx));
    }
  };
}
