/**
 * Forwards a request to a service hosted in this process (one process for all, SERVICES=all): the
 * request is handed to the service's app in memory, without a socket, and the app answers on the
 * client's response itself, streams included. What upstream-proxy.ts does around a hop is done
 * here the same way, so that an answer does not depend on the mode:
 * - the app reads the body the gateway read (request-body.ts), with the same headers (a request
 *   without a body is the client's own);
 * - the hop is a client span of its own, whose context the app's server span continues;
 * - a private answer gets `Cache-Control: no-store`, and `Server-Timing` is dropped unless
 *   configured, whatever the app set;
 * - an app that has not begun its answer within the timeout gets the gateway's 504.
 * There is nothing to retry: a service in the same process cannot refuse a connection.
 */
import { IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import type { HostedListener } from '@cs/lifecycle';
import type { Logger } from '@cs/log';
import { startClientSpan } from '@cs/telemetry';
import { upstreamFailures } from '../metrics';
import { answerFailure } from './error-mapping';
import type { Forwarding, UpstreamProxy } from './upstream-proxy';

export interface InProcessProxyOptions {
  listener: HostedListener;
  name: string;
  /** The service's address (`http://<name>.in-process`): what spans name. */
  target: string;
  /** How long the app may take to begin its answer. */
  timeoutMs: number;
  serverTiming: boolean;
  logger: Logger;
}

export function createInProcessProxy({
  listener,
  name,
  target,
  timeoutMs,
  serverTiming,
  logger,
}: InProcessProxyOptions): UpstreamProxy {
  return (req, res, forwarding) => {
    const method = req.method ?? 'GET';
    const span = startClientSpan(method, `${target}${req.url}`, method);
    const request = forwarding.body ? withBody(req, forwarding.body, span.headers) : req;
    if (!forwarding.body) Object.assign(req.headers, span.headers);
    let timer: NodeJS.Timeout | undefined = setTimeout(() => {
      if (res.headersSent || res.destroyed) return;
      logger.error(
        { upstream: name, requestId: req.headers['x-request-id'], path: req.url, timeoutMs },
        'upstream failed',
      );
      upstreamFailures.inc({ upstream: name, status: 504 });
      answerFailure(res, 504);
    }, timeoutMs);
    // Once the app begins its answer the timeout is over, and let go: a stream, which lasts for
    // hours, holds neither it nor what its callback holds.
    const over = () => {
      clearTimeout(timer);
      timer = undefined;
    };
    overrideAnswerHeaders(res, forwarding, serverTiming, over);
    res.on('close', () => {
      over();
      span.end(res.statusCode);
    });
    listener(request, res);
  };
}

/**
 * The request as the app reads it, with the body the gateway read (the client's own stream is
 * spent). A request without a body is handed on as it is.
 */
function withBody(req: IncomingMessage, body: Buffer, extraHeaders: Record<string, string>): IncomingMessage {
  const inner = new IncomingMessage(req.socket);
  inner.method = req.method;
  inner.url = req.url;
  inner.httpVersion = req.httpVersion;
  inner.httpVersionMajor = req.httpVersionMajor;
  inner.httpVersionMinor = req.httpVersionMinor;
  inner.headers = { ...req.headers, ...extraHeaders };
  inner.push(body);
  inner.push(null);
  // Whole already: else, once read, it counts as cut short and takes the client's socket with it.
  inner.complete = true;
  return inner;
}

/** Applies the gateway's rules to the headers the app sends, when it sends them. */
function overrideAnswerHeaders(
  res: ServerResponse,
  { private: isPrivate }: Forwarding,
  serverTiming: boolean,
  begun: () => void,
): void {
  const writeHead = res.writeHead;
  res.writeHead = function writeHeadAsTheGatewaySays(this: ServerResponse, status: number, ...rest: unknown[]) {
    // Called once: the response's own method again, so that a stream does not keep this for its life.
    res.writeHead = writeHead;
    begun();
    const last = rest.at(-1);
    if (last !== null && typeof last === 'object' && !Array.isArray(last)) {
      for (const [header, value] of Object.entries(last as OutgoingHttpHeaders)) {
        if (value !== undefined) this.setHeader(header, value);
      }
      rest.pop();
    }
    if (isPrivate) this.setHeader('cache-control', 'no-store');
    if (!serverTiming) this.removeHeader('server-timing');
    return (writeHead as (status: number, ...rest: unknown[]) => ServerResponse).call(this, status, ...rest);
  } as ServerResponse['writeHead'];
}
