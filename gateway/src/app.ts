import { STATUS_CODES } from 'node:http';
import type { TokenVerifier } from '@cs/auth';
import { messages } from '@cs/errors';
import type { ServiceReach } from '@cs/lifecycle';
import type { Logger } from '@cs/log';
import { metricsEnabled, tracingOn } from '@cs/telemetry';
import cors from 'cors';
import express, { type NextFunction, type Request, type Response } from 'express';
import { rateLimit, type Store } from 'express-rate-limit';
import { refuseBodyTooLarge } from './body-too-large';
import { type Config, trustProxySetting } from './config';
import { docsRoutes } from './docs';
import { httpMetrics, rateLimited } from './metrics';
import { accessLog, authGuard, bodyLimit, dropInternalHeaders, requestId } from './middleware';
import { sharedReadiness } from './readiness';
import { sendError } from './respond';
import { type Route, resolveRoute, type Upstream } from './route-table';
import { securityHeaders } from './security-headers';
import { LimitStoreUnavailable, type SharedLimits } from './shared-limits';
import { traceRequests } from './tracing';
import type { UpstreamProxy } from './upstream/forwarding';
import { readBody } from './upstream/request-body';
import { transportTo } from './upstream/transport';
import { createUpstreamProxy } from './upstream/upstream-proxy';
import { verifiedEmailGate } from './verified-email';
import { webClient } from './web';

/** The methods the API uses (and CORS preflights); anything else is 405 before any hop. */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** A limit per client IP, counted in `store` (Redis, shared by every gateway) or in this process. */
function limiter(name: 'auth' | 'default', perWindow: number, windowMs: number, store?: Store) {
  if (perWindow <= 0) return (_req: Request, _res: Response, next: NextFunction) => next();
  const limit = rateLimit({
    windowMs,
    limit: perWindow,
    standardHeaders: 'draft-7',
    legacyHeaders: false,
    ...(store ? { store, passOnStoreError: false } : {}),
    handler: (_req, res) => {
      rateLimited.inc({ limit: name });
      sendError(res, 429, messages.tooManyRequests);
    },
  });
  return (req: Request, res: Response, next: NextFunction) =>
    limit(req, res, (err?: unknown) => {
      // A limit that fails closed while its store is away (see shared-limits.ts).
      if (err instanceof LimitStoreUnavailable)
        return sendError(res, 503, messages.unavailable, { 'retry-after': '1' });
      next(err);
    });
}

export interface GatewayOptions {
  /** How tokens are verified: the signature, and the revocation list that follows identity's log. */
  tokens: TokenVerifier;
  /** Where the limits count when several gateways must share them (REDIS_URL); else in memory. */
  sharedLimits?: SharedLimits;
  /** How the services are reached: over the network, or in memory when this process hosts them. */
  reach: ServiceReach;
}

export function createGateway(config: Config, logger: Logger, { tokens, sharedLimits, reach }: GatewayOptions) {
  const targets: Record<Upstream, string> = {
    identity: config.IDENTITY_URL,
    posts: config.POSTS_URL,
    notes: config.NOTES_URL,
    files: config.FILES_URL,
    realtime: config.REALTIME_URL,
  };
  const proxies = Object.fromEntries(
    Object.entries(targets).map(([name, target]) => {
      const streams = name === 'realtime';
      const proxy = createUpstreamProxy({
        name,
        transport: transportTo(target, reach, { streams }),
        timeoutMs: streams ? config.STREAM_TIMEOUT : config.UPSTREAM_TIMEOUT,
        retryWindowMs: config.UPSTREAM_RETRY_WINDOW,
        serverTiming: config.SERVER_TIMING,
        logger,
      });
      return [name, proxy];
    }),
  ) as Record<Upstream, UpstreamProxy>;
  const limits = {
    auth: limiter('auth', config.AUTH_RATE_LIMIT, config.RATE_WINDOW, sharedLimits?.store('auth', 'fail-closed')),
    default: limiter('default', config.RATE_LIMIT, config.RATE_WINDOW, sharedLimits?.store('default', 'fail-open')),
  };
  const verifiedEmail = config.REQUIRE_VERIFIED_EMAIL
    ? verifiedEmailGate({
        identityUrl: config.IDENTITY_URL,
        secret: config.JWT_SECRET,
        fetch: reach.fetch,
        tokens,
        logger,
      })
    : undefined;
  const origins = config.FRONTEND_ORIGIN.length > 0 ? [...config.FRONTEND_ORIGIN] : [`http://localhost:${config.PORT}`];

  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', trustProxySetting(config.TRUST_PROXY));
  if (tracingOn()) app.use(traceRequests());
  app.use(securityHeaders());
  app.use(requestId());
  if (metricsEnabled()) app.use(httpMetrics());
  app.use(accessLog(logger));
  app.use(dropInternalHeaders());
  app.use(
    cors({
      origin: origins,
      methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
      allowedHeaders: [
        'Authorization',
        'Content-Type',
        'If-None-Match',
        // Sent by the client library's and the browser's reconnects of an event stream.
        'Last-Event-ID',
        'X-Request-Id',
        'X-Refresh-Token',
        'X-Device-Token',
      ],
      exposedHeaders: [
        'X-Request-Id',
        'X-Device-Token',
        'ETag',
        'Retry-After',
        'Link',
        ...(config.SERVER_TIMING ? ['Server-Timing'] : []),
      ],
      maxAge: 600,
    }),
  );

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  const readiness = sharedReadiness(targets, reach.fetch);
  app.get('/readyz', async (_req, res) => {
    const services = await readiness();
    // Before its revocation list is read, the gateway cannot check tokens: not ready either.
    const ready = Object.values(services).every(Boolean) && tokens.ready();
    const notice = tokens.notice();
    res.status(ready ? 200 : 503).json({
      ...(ready ? { status: 'ready' } : { error: 'Not ready' }),
      services,
      ...(notice === undefined ? {} : { notices: { tokens: notice } }),
    });
  });

  app.use(function knownMethods(req: Request, res: Response, next: NextFunction) {
    if (METHODS.has(req.method)) return next();
    sendError(res, 405, messages.methodNotAllowed, { allow: [...METHODS].join(', ') });
  });
  app.use(docsRoutes());
  app.use(webClient());

  app.use(function route(req: Request, res: Response, next: NextFunction) {
    const found = resolveRoute(req.method, req.path);
    if (!found) return sendError(res, 404, messages.notFound);
    res.locals.route = found;
    limits[found.limit](req, res, next);
  });
  app.use(bodyLimit(config.BODY_LIMIT_BYTES));
  app.use(async function forward(req: Request, res: Response) {
    const found = res.locals.route as Route;
    if (!(await authGuard(found.auth, tokens, req, res))) return;
    if (verifiedEmail && !(await verifiedEmail(found, req, res))) return;
    // Who is calling, as `trust proxy` resolves it: identity throttles failed logins by it.
    req.headers['x-internal-client-address'] = req.ip ?? 'unknown';
    const read = await readBody(req, config.BODY_LIMIT_BYTES);
    if (read.outcome === 'aborted') return;
    if (read.outcome === 'too-large') return refuseBodyTooLarge(req, res);
    // A token sent, or one answered (identity): the answer is that person's alone.
    const isPrivate = req.headers.authorization !== undefined || found.upstream === 'identity';
    // Express is done with the request: the router state its `next` holds is not kept for as long
    // as the answer lasts (a stream's, for hours).
    req.next = undefined;
    proxies[found.upstream](req, res, { body: read.body, private: isPrivate });
  });

  // A client's error keeps its status (a path whose percent-escapes do not decode is a 400, as
  // Express marks it); anything else is ours: 500, with the cause in the log only.
  app.use(function errorHandler(err: unknown, req: Request, res: Response, _next: NextFunction) {
    const status = clientErrorStatus(err);
    if (status !== undefined) {
      logger.warn({ err, requestId: req.headers['x-request-id'] }, 'client error');
      if (!res.headersSent) sendError(res, status, STATUS_CODES[status] ?? 'Bad request');
      return;
    }
    logger.error({ err, requestId: req.headers['x-request-id'] }, 'gateway error');
    if (!res.headersSent) sendError(res, 500, messages.internal);
  });
  return app;
}

/** The 4xx an error carries (`status` or `statusCode`, as http-errors and Express set them), if any. */
function clientErrorStatus(err: unknown): number | undefined {
  const { status, statusCode } = (err ?? {}) as { status?: unknown; statusCode?: unknown };
  const code = typeof status === 'number' ? status : statusCode;
  return typeof code === 'number' && code >= 400 && code < 500 ? code : undefined;
}
