import { Agent, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { messages } from '@cs/errors';
import type { Logger } from '@cs/log';
import { createProxyMiddleware, type RequestHandler } from 'http-proxy-middleware';
import { sendError } from './respond';

export interface ProxyOptions {
  target: string;
  name: string;
  timeoutMs: number;
  logger: Logger;
}

/**
 * One keep-alive pool per upstream. Idle sockets are dropped after 30 s, well before the
 * services' 65 s keep-alive timeout, so we never write to a socket the other side has closed.
 */
function keepAliveAgent(): Agent {
  return new Agent({ keepAlive: true, keepAliveMsecs: 1000, maxSockets: 256, maxFreeSockets: 64, timeout: 30_000 });
}

const TIMED_OUT = 'ETIMEDOUT_UPSTREAM';

/**
 * Streams a request to one upstream, bodies untouched. A refused or broken connection is a JSON
 * 502; no answer within `timeoutMs` is a JSON 504. Neither ever hangs the client.
 */
export function createUpstreamProxy({
  target,
  name,
  timeoutMs,
  logger,
}: ProxyOptions): RequestHandler<IncomingMessage, ServerResponse> {
  return createProxyMiddleware<IncomingMessage, ServerResponse>({
    target,
    agent: keepAliveAgent(),
    changeOrigin: false,
    xfwd: false,
    on: {
      proxyReq(proxyReq) {
        proxyReq.setTimeout(timeoutMs, () => {
          proxyReq.destroy(Object.assign(new Error(`${name} did not answer in ${timeoutMs} ms`), { code: TIMED_OUT }));
        });
      },
      error(err, req, res) {
        const code = (err as NodeJS.ErrnoException).code;
        const timedOut = code === TIMED_OUT;
        logger.error(
          { upstream: name, code, requestId: req.headers['x-request-id'], path: req.url },
          'upstream failed',
        );
        if (!('setHeader' in res)) return (res as Socket).destroy();
        if (res.headersSent) return res.destroy();
        sendError(res, timedOut ? 504 : 502, timedOut ? messages.upstreamTimeout : messages.upstreamUnavailable);
      },
    },
  });
}
