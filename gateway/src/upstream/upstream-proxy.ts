/**
 * Forwards a request to one service over its transport (transport.ts) and streams the answer
 * back, never buffered. Above the transport: retries (retry-policy.ts), one span per attempt
 * (attempt-span.ts) and the mapping of failures to 502/504 (error-mapping.ts). Nothing hangs.
 *
 * The upstream timeout is an idle one: the exchange fails when the service sends nothing for
 * `timeoutMs`, before its answer (504) or during it (the answer is cut). An answer that keeps
 * sending, such as a Server-Sent Events stream with its heartbeats, is never cut for its length.
 *
 * Per-request state is the caller's `Forwarding` and this module's `Attempts`, made when
 * forwarding begins. http-proxy-middleware's events name the request only, so each proxy finds a
 * request's state by it, in a map of its own that holds it while the request lives.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { createRetryWindow } from '@cs/lifecycle';
import type { Logger } from '@cs/log';
import type { ClientSpan } from '@cs/telemetry';
import { type Context, context } from '@opentelemetry/api';
import { createProxyMiddleware } from 'http-proxy-middleware';
import { upstreamFailures, upstreamRetries } from '../metrics';
import { startAttemptSpan } from './attempt-span';
import { answerFailure, failureStatus, silentFor } from './error-mapping';
import { retryDelay } from './retry-policy';
import type { Transport } from './transport';

export interface ProxyOptions {
  transport: Transport;
  name: string;
  /** How long the service may send nothing, before or during its answer. */
  timeoutMs: number;
  /**
   * How long a request that could not reach the upstream (refused, or its name or address gone)
   * is retried before the answer is 502: long enough for a restarted or replaced service to come
   * back. An upstream unreachable for longer than this is down, and its requests fail at once
   * until it answers again.
   */
  retryWindowMs: number;
  /** Whether the services' `Server-Timing` (database and app time) reaches clients. */
  serverTiming: boolean;
  logger: Logger;
}

/** What the caller knows of a request before it is forwarded. */
export interface Forwarding {
  /** The body, read whole before the first attempt (request-body.ts) and sent with each. */
  body: Buffer | undefined;
  /**
   * Whether the answer belongs to one person (the request carried a token, or answers with one):
   * it gets `Cache-Control: no-store`, whatever the service said, so no browser or shared cache
   * keeps it. Anonymous public reads keep the service's ETag and caching.
   */
  private: boolean;
}

export type UpstreamProxy = (req: IncomingMessage, res: ServerResponse, forwarding: Forwarding) => void;

interface Attempts extends Forwarding {
  count: number;
  firstAt: number;
  /** The request's trace context, the parent of every attempt's span. */
  context: Context;
  span?: ClientSpan;
  /**
   * The headers of the service's answer, once it has begun: http-proxy copies them onto the
   * client's answer, and sends them with the first byte of the body. A failure before that byte
   * takes them off again, so that the 504 or 502 is ours alone.
   */
  answerHeaders?: string[];
}

export function createUpstreamProxy({
  transport,
  name,
  timeoutMs,
  retryWindowMs,
  serverTiming,
  logger,
}: ProxyOptions): UpstreamProxy {
  const requests = new WeakMap<IncomingMessage, Attempts>();
  const retryWindow = createRetryWindow(retryWindowMs);

  const proxy = createProxyMiddleware<IncomingMessage, ServerResponse>({
    target: transport.target,
    agent: transport.agent,
    changeOrigin: false,
    xfwd: false,
    on: {
      proxyReq(proxyReq, req) {
        const state = requests.get(req);
        if (state) state.span = startAttemptSpan(proxyReq, transport.target, req.method ?? 'GET', state.context);
        proxyReq.setTimeout(timeoutMs, () => proxyReq.destroy(silentFor(name, timeoutMs)));
        if (state?.body) proxyReq.write(state.body);
      },
      proxyRes(proxyRes, req) {
        retryWindow.reached();
        const state = requests.get(req);
        const span = state?.span;
        if (span) proxyRes.once('close', () => span.end(proxyRes.statusCode ?? 0));
        // Headers are copied to the client's answer after this event.
        if (state?.private) proxyRes.headers['cache-control'] = 'no-store';
        if (!serverTiming) delete proxyRes.headers['server-timing'];
        if (state) state.answerHeaders = Object.keys(proxyRes.headers);
      },
      error(err, req, res) {
        const error = err as NodeJS.ErrnoException;
        const state = requests.get(req);
        state?.span?.end(error);
        if (!('setHeader' in res)) return (res as Socket).destroy();
        // (The request stream itself is destroyed once read; the client is gone when its socket is.)
        const answered = state?.answerHeaders !== undefined;
        const clientWaits = !answered && !res.headersSent && !res.destroyed && !req.socket.destroyed;
        const delay =
          state && clientWaits
            ? retryDelay(retryWindow, { method: req.method ?? '', attempt: state.count, firstAt: state.firstAt, error })
            : undefined;
        if (state && delay !== undefined) {
          state.count += 1;
          upstreamRetries.inc({ upstream: name });
          // Each attempt adds the proxy's listeners to the client's response until it ends; a
          // request retried through a long window (about 30 attempts in 10 s) is not a leak.
          if (state.count >= 8) res.setMaxListeners(Math.max(res.getMaxListeners(), state.count + 8));
          logger.debug(
            { upstream: name, code: error.code, attempt: state.count, requestId: req.headers['x-request-id'] },
            'retrying',
          );
          setTimeout(() => void proxy(req, res, () => {}), delay);
          return;
        }
        const status = failureStatus(error);
        logger.error(
          {
            upstream: name,
            code: error.code,
            requestId: req.headers['x-request-id'],
            path: req.url,
            attempts: state?.count,
          },
          'upstream failed',
        );
        if (!res.headersSent) {
          upstreamFailures.inc({ upstream: name, status });
          for (const header of state?.answerHeaders ?? []) res.removeHeader(header);
        }
        answerFailure(res, status);
      },
    },
  });

  return (req, res, forwarding) => {
    requests.set(req, { ...forwarding, count: 1, firstAt: Date.now(), context: context.active() });
    void proxy(req, res, () => {});
  };
}
