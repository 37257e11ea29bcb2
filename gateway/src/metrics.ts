/**
 * The gateway's metrics. Requests are labelled by the contract's route templates (the OpenAPI
 * document's paths: `/api/posts/{id}`), so the labels are the contract's, never a caller's path;
 * anything else (the web client, the docs, unknown paths) is `other`. The hop's own troubles are
 * counted by upstream: retries, and the 502s and 504s the gateway answered itself.
 */
import { openApiDocument, servedTemplates } from '@cs/contract';
import { counter, httpRequestDuration, statusClass } from '@cs/telemetry';
import type { NextFunction, Request, Response } from 'express';

/** The documented templates and their aliases (an alias is labelled as the route it serves). */
const TEMPLATES = servedTemplates(Object.keys(openApiDocument.paths));

export function routeTemplate(path: string): string {
  return TEMPLATES.find(({ pattern }) => pattern.test(path))?.template ?? 'other';
}

export const upstreamRetries = counter(
  'gateway_upstream_retries_total',
  'Requests sent to an upstream again because the first attempt never reached it (restarting, replaced) or met a reset on a reused connection.',
  ['upstream'],
);
export const upstreamFailures = counter(
  'gateway_upstream_failures_total',
  'Answers the gateway gave itself for an upstream: 502 (could not reach it or the connection broke) or 504 (no answer in time).',
  ['upstream', 'status'],
);
export const rateLimited = counter('gateway_rate_limited_total', 'Requests refused with 429 by a rate limit.', [
  'limit',
]);
export const connectionsRefused = counter(
  'gateway_connections_refused_total',
  'Connections refused: over the cap of their client address (`address`), or over the total the open-files limit leaves (`total`).',
  ['limit'],
);

/** Times every request by route template; one that the client gave up on is `aborted`. */
export function httpMetrics() {
  const duration = httpRequestDuration();
  return function httpMetrics(req: Request, res: Response, next: NextFunction) {
    const started = process.hrtime.bigint();
    // Emitted once per response; `on` spares the wrapper `once` makes.
    res.on('close', () => {
      duration.observe(
        {
          service: 'gateway',
          method: req.method,
          route: routeTemplate(req.path),
          status_class: res.writableFinished ? statusClass(res.statusCode) : 'aborted',
        },
        Number(process.hrtime.bigint() - started) / 1e9,
      );
    });
    next();
  };
}
