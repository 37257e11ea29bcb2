/**
 * The HTTP server every part answers with, whether it listens on a port (run-server.ts) or is
 * reached in memory by the other parts of its process (hosted-services.ts): the same timeouts, the
 * same checks of what arrives, and our JSON errors where Node would answer on its own.
 */
import { createServer, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';

/** Anything that hands out a Node request listener: a Koa or Express app. */
export interface HttpApp {
  callback(): RequestListener;
}

/**
 * How long an idle keep-alive connection stays open. Node announces it to every client in a
 * `Keep-Alive: timeout=5` header, and a client that honours it (Node's `http.Agent` with a
 * timeout, undici) retires the socket a second or more before that, so it never writes a request
 * onto a connection we are closing. The gateway's agent also retires idle sockets after 4 s.
 */
export const KEEP_ALIVE_TIMEOUT_MS = 5_000;

/**
 * The same for a service behind the gateway. The gateway's agent retires its idle sockets after
 * 4 s, by a timer of its event loop; under load (a 2-core machine building images beside the
 * running stack), that loop can be late by more than the one second between that and 5 s, and
 * then write a request onto a socket the service has just closed: a reset, and a POST that cannot
 * be sent again (Compose's occasional 502 on a redeploy). A service keeps idle connections far
 * longer, so that its clients always retire them first; only our own hops connect to it.
 */
export const SERVICE_KEEP_ALIVE_TIMEOUT_MS = 30_000;

/**
 * How long a connection may take to send a request's headers (the first request from the moment
 * it connects, later ones from their first byte) before it is answered 408 and closed. A client
 * sends its headers at once; a socket that trickles them, or sends nothing, only holds a file
 * descriptor. Node looks for such sockets only every `connectionsCheckingInterval` (30 s unless
 * told), so with the check every second a socket is closed 10 to 11 s after it started.
 */
export const HEADERS_TIMEOUT_MS = 10_000;
export const CONNECTIONS_CHECK_INTERVAL_MS = 1_000;
/**
 * How long the whole request, its body too, may take to arrive. Bodies are small JSON here (files
 * go straight to storage); the answer is not limited by it, so a long-lived event stream is not.
 */
export const REQUEST_TIMEOUT_MS = 30_000;

/**
 * What Node answers, on its own, to a request its HTTP parser refuses (a bare CR or a NUL in a
 * header, obs-fold, an oversized header block…), but as our usual JSON error, not an empty body.
 */
function answerMalformed(err: NodeJS.ErrnoException, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const [status, reason, message] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'Request Header Fields Too Large', 'Request headers too large']
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'Request Timeout', 'Request timed out']
        : [400, 'Bad Request', 'Malformed HTTP request'];
  const body = JSON.stringify({ error: message });
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/** Our error shape from a plain response, and the connection closed after it. */
function answerJson(res: ServerResponse, status: number, error: string): void {
  const body = JSON.stringify({ error });
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    connection: 'close',
  });
  res.end(body);
}

/** An HTTP server for `handle`, not yet listening, with our checks and timeouts. */
export function createHttpServer(handle: RequestListener, keepAliveTimeoutMs: number): Server {
  const server = createServer(
    {
      headersTimeout: HEADERS_TIMEOUT_MS,
      requestTimeout: REQUEST_TIMEOUT_MS,
      connectionsCheckingInterval: CONNECTIONS_CHECK_INTERVAL_MS,
      // Checked below, so that the answer has our shape (Node's own is an empty 400).
      requireHostHeader: false,
    },
    (req, res) => {
      if (req.httpVersion === '1.1' && req.headers.host === undefined) {
        return answerJson(res, 400, 'Host header required');
      }
      return handle(req, res);
    },
  );
  server.keepAliveTimeout = keepAliveTimeoutMs;
  server.on('clientError', answerMalformed);
  // An Expect other than 100-continue: Node would answer a bare 417 itself.
  server.on('checkExpectation', (_req, res: ServerResponse) =>
    answerJson(res, 417, 'Expectation Failed: only 100-continue is met'),
  );
  return server;
}
