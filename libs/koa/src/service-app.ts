import type { TokenVerifier } from '@cs/auth';
import { HttpError, messages } from '@cs/errors';
import type { Logger } from '@cs/log';
import { metricsEnabled, tracingOn } from '@cs/telemetry';
import type Router from '@koa/router';
import type Koa from 'koa';
import { accessLog } from './access-log';
import type { AppState } from './context';
import { errorHandler } from './error-handler';
import { healthRoutes, type ReadinessCheck, withTimeout } from './health';
import { jsonBody } from './json-body';
import { httpMetrics } from './metrics';
import { requestId } from './request-id';
import { ServiceKoa } from './service-koa';
import { traceRequests } from './tracing';

export interface ServiceAppOptions {
  /** The service's name: its requests are measured under it. */
  name: string;
  logger: Logger;
  routers: Router<AppState>[];
  readiness: Record<string, ReadinessCheck>;
  /** How the service verifies tokens: not ready before its revocation list is read, a notice when it is stale. */
  tokens: TokenVerifier;
  bodyLimit?: string;
}

/**
 * Every service's stack, in one order: span (when tracing) → request id → metrics (when on) → access log →
 * errors → JSON body → health → routes → JSON 404. A service only brings its routers and its readiness checks.
 */
const methodNotAllowed = () => new HttpError(405, messages.methodNotAllowed);

export function createServiceApp({
  name,
  logger,
  routers,
  readiness,
  tokens,
  bodyLimit,
}: ServiceAppOptions): Koa<AppState> {
  const app = new ServiceKoa();
  app.silent = true;
  if (tracingOn()) app.use(traceRequests());
  app.use(requestId());
  if (metricsEnabled()) app.use(httpMetrics(name));
  app.use(accessLog({ logger }));
  app.use(errorHandler({ logger }));
  app.use(jsonBody(bodyLimit ? { limit: bodyLimit } : {}));
  const checks = { ...readiness, tokens: async () => tokens.ready() };
  const health = healthRoutes(Object.fromEntries(Object.entries(checks).map(([k, c]) => [k, withTimeout(c)])), {
    tokens: () => tokens.notice(),
  });
  for (const router of [health, ...routers]) {
    app.use(router.routes());
    // An unknown method (TRACE, PATCH...) is the client's mistake too: 405, never the router's 501.
    app.use(
      router.allowedMethods({ throw: true, methodNotAllowed: methodNotAllowed, notImplemented: methodNotAllowed }),
    );
  }
  // Sets rather than throws, so the routers' allowedMethods above can still turn it into a 405.
  app.use(async function notFound(ctx) {
    ctx.status = 404;
    ctx.body = { error: messages.notFound };
  });
  return app;
}
