import { Agent, type ClientRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { messages } from '@cs/errors';
import { KEEP_ALIVE_TIMEOUT_MS } from '@cs/lifecycle';
import type { Logger } from '@cs/log';
import { createProxyMiddleware } from 'http-proxy-middleware';
import { sendError } from './respond';

export interface ProxyOptions {
  target: string;
  name: string;
  timeoutMs: number;
  /**
   * How long a refused connection is retried before the answer is 502: long enough for a
   * restarted service to come back on its port. An upstream refusing for longer than this is
   * down, and its requests fail at once until it answers again.
   */
  retryWindowMs: number;
  /** Whether the services' `Server-Timing` (database and app time) reaches clients. */
  serverTiming: boolean;
  logger: Logger;
}

export type UpstreamProxy = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * One keep-alive pool per upstream. Idle sockets are retired a second before the services'
 * announced keep-alive timeout (`Keep-Alive: timeout=5`, which the agent would honour anyway), so
 * we never write a request onto a socket the service is closing, whether on a quiet moment or
 * while it drains for a restart (libs/lifecycle keeps open connections until then).
 */
function keepAliveAgent(): Agent {
  return new Agent({
    keepAlive: true,
    keepAliveMsecs: 1000,
    maxSockets: 256,
    maxFreeSockets: 64,
    timeout: KEEP_ALIVE_TIMEOUT_MS - 1000,
  });
}

const TIMED_OUT = 'ETIMEDOUT_UPSTREAM';
/** Methods whose repetition changes nothing more than the first time (RFC 9110 §9.2.2). */
const IDEMPOTENT = new Set(['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS']);

/** Requests whose answers are one person's: see `markPrivate`. */
const privateRequests = new WeakSet<IncomingMessage>();

/**
 * Marks a request whose answer belongs to one person (it carried a token, or it answers with
 * one): the answer gets `Cache-Control: no-store`, whatever the service said, so no browser or
 * shared cache keeps it. Anonymous public reads keep the service's ETag and caching.
 */
export function markPrivate(req: IncomingMessage): void {
  privateRequests.add(req);
}

/** Request bodies, read whole before the first attempt (see `readBody`) so a retry can resend them. */
const bodies = new WeakMap<IncomingMessage, Buffer>();

/**
 * Reads a request's body into memory, at most `maxBytes` (the gateway's body limit, 100 kB by
 * default), because a retry must be able to send it again. Afterwards `Content-Length` describes
 * the body exactly as it will be sent, also when the client sent it chunked.
 */
export function readBody(req: IncomingMessage, maxBytes: number): Promise<'read' | 'too-large' | 'aborted'> {
  const declared = req.headers['content-length'];
  if ((declared === undefined || declared === '0') && req.headers['transfer-encoding'] === undefined) {
    return Promise.resolve('read');
  }
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (outcome: 'read' | 'too-large' | 'aborted') => {
      req.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose);
      resolve(outcome);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) return done('too-large');
      chunks.push(chunk);
    };
    const onEnd = () => {
      const body = Buffer.concat(chunks, size);
      bodies.set(req, body);
      delete req.headers['transfer-encoding'];
      req.headers['content-length'] = String(body.length);
      done('read');
    };
    const onError = () => done('aborted');
    const onClose = () => {
      if (!req.complete) done('aborted');
    };
    req.on('data', onData).on('end', onEnd).on('error', onError).on('close', onClose);
  });
}

interface Attempts {
  count: number;
  firstAt: number;
  last?: ClientRequest;
}

/**
 * Sends a request to one upstream and streams the answer back. A refused connection (the
 * request never reached the service: it is restarting) is retried with backoff within the
 * retry window, for every method, since the body is held; a connection reset on a reused
 * keep-alive socket before any answer is retried once, for idempotent methods only. Otherwise a
 * broken connection is a JSON 502, and no answer within `timeoutMs` a JSON 504. Nothing hangs.
 */
export function createUpstreamProxy({
  target,
  name,
  timeoutMs,
  retryWindowMs,
  serverTiming,
  logger,
}: ProxyOptions): UpstreamProxy {
  const attempts = new WeakMap<IncomingMessage, Attempts>();
  /** Since when every new connection to the upstream has been refused; unset once it answers. */
  let refusedSince: number | undefined;

  const retryDelay = (req: IncomingMessage, err: NodeJS.ErrnoException, res: ServerResponse): number | undefined => {
    const state = attempts.get(req);
    // (The request stream itself is destroyed once read; the client is gone when its socket is.)
    if (!state || res.headersSent || res.destroyed || req.socket.destroyed) return undefined;
    const now = Date.now();
    if (err.code === 'ECONNREFUSED') {
      refusedSince ??= now;
      if (now - refusedSince > retryWindowMs) return undefined;
      const delay = Math.min(50 * 2 ** (state.count - 1), 400);
      return now + delay - state.firstAt <= retryWindowMs ? delay : undefined;
    }
    const reset = err.code === 'ECONNRESET' || err.code === 'EPIPE';
    if (reset && state.last?.reusedSocket && state.count === 1 && IDEMPOTENT.has(req.method ?? '')) return 0;
    return undefined;
  };

  const proxy = createProxyMiddleware<IncomingMessage, ServerResponse>({
    target,
    agent: keepAliveAgent(),
    changeOrigin: false,
    xfwd: false,
    on: {
      proxyReq(proxyReq, req) {
        const state = attempts.get(req);
        if (state) state.last = proxyReq;
        proxyReq.setTimeout(timeoutMs, () => {
          proxyReq.destroy(Object.assign(new Error(`${name} did not answer in ${timeoutMs} ms`), { code: TIMED_OUT }));
        });
        const body = bodies.get(req);
        if (body) proxyReq.write(body);
      },
      proxyRes(proxyRes, req) {
        refusedSince = undefined;
        // Headers are copied to the client's answer after this event.
        if (privateRequests.has(req)) proxyRes.headers['cache-control'] = 'no-store';
        if (!serverTiming) delete proxyRes.headers['server-timing'];
      },
      error(err, req, res) {
        const code = (err as NodeJS.ErrnoException).code;
        if (!('setHeader' in res)) return (res as Socket).destroy();
        const delay = retryDelay(req, err as NodeJS.ErrnoException, res);
        if (delay !== undefined) {
          const state = attempts.get(req) as Attempts;
          state.count += 1;
          logger.debug(
            { upstream: name, code, attempt: state.count, requestId: req.headers['x-request-id'] },
            'retrying',
          );
          setTimeout(() => void proxy(req, res, () => {}), delay);
          return;
        }
        const timedOut = code === TIMED_OUT;
        logger.error(
          {
            upstream: name,
            code,
            requestId: req.headers['x-request-id'],
            path: req.url,
            attempts: attempts.get(req)?.count,
          },
          'upstream failed',
        );
        if (res.headersSent) return res.destroy();
        sendError(res, timedOut ? 504 : 502, timedOut ? messages.upstreamTimeout : messages.upstreamUnavailable);
      },
    },
  });

  return (req, res) => {
    attempts.set(req, { count: 1, firstAt: Date.now() });
    void proxy(req, res, () => {});
  };
}
