/**
 * Forwards a request to one service over its transport (transport.ts) and streams the answer
 * back, never buffered. The gateway's one proxy: what it does around a hop is written once, for
 * both transports: the rules on the answer's headers (answer-rules.ts), the timeout's 504 and the
 * failure's log, metric and answer (error-mapping.ts), a client span per hop. Over sockets, what
 * only a network has besides: retries (retry-policy.ts), one span per attempt (attempt-span.ts).
 * In process, the hop is in-process-hop.ts. Nothing hangs.
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
import { upstreamRetries } from '../metrics';
import { applyAnswerRules } from './answer-rules';
import { startAttemptSpan } from './attempt-span';
import { failForwarding, failureStatus, silentFor } from './error-mapping';
import type { Forwarding, UpstreamProxy } from './forwarding';
import { inProcessHop } from './in-process-hop';
import { retryDelay } from './retry-policy';
import type { SocketTransport, Transport } from './transport';

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

export function createUpstreamProxy(options: ProxyOptions): UpstreamProxy {
  const { transport } = options;
  if ('handler' in transport) return inProcessHop({ ...options, handler: transport.handler, target: transport.target });
  return overSockets({ ...options, transport });
}

function overSockets({
  transport,
  name,
  timeoutMs,
  retryWindowMs,
  serverTiming,
  logger,
}: ProxyOptions & { transport: SocketTransport }): UpstreamProxy {
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
        const headers = proxyRes.headers;
        applyAnswerRules(
          {
            set: (header, value) => {
              headers[header] = value;
            },
            remove: (header) => {
              delete headers[header];
            },
          },
          { isPrivate: state?.private === true, serverTiming },
        );
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
        // The service's headers, copied before its first byte, are not part of our failure.
        if (!res.headersSent) for (const header of state?.answerHeaders ?? []) res.removeHeader(header);
        failForwarding(logger, {
          name,
          req,
          res,
          status: failureStatus(error),
          details: { code: error.code, attempts: state?.count },
        });
      },
    },
  });

  return (req, res, forwarding) => {
    requests.set(req, { ...forwarding, count: 1, firstAt: Date.now(), context: context.active() });
    void proxy(req, res, () => {});
  };
}
