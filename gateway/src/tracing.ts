import { startServerSpan } from '@cs/telemetry';
import { context } from '@opentelemetry/api';
import type { NextFunction, Request, Response } from 'express';
import { routeTemplate } from './metrics';

/**
 * Runs each request in a server span of its own, under the caller's trace (a browser's SDK may
 * start it), named after the contract's route template (`GET /api/posts/{id}`). The proxy's
 * calls to the services are its children (`upstream/attempt-span.ts`). Installed only when tracing is on.
 */
export function traceRequests() {
  return function traceRequests(req: Request, res: Response, next: NextFunction) {
    const path = req.path;
    const span = startServerSpan(req.method, path, req.headers);
    // Emitted once per response; `on` spares the wrapper `once` makes.
    res.on('close', () => {
      const route = routeTemplate(path);
      span.end(res.statusCode, route === 'other' ? undefined : route);
    });
    context.with(span.context, next);
  };
}
