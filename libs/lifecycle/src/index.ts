import type { RequestListener, Server, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import { Server as NetServer } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Logger } from '@cs/log';

export {
  hostedAt,
  hostInProcess,
  inProcessUrl,
  type RequestListener as HostedListener,
  serviceFetch,
} from './in-process';
export { createRetryWindow, type RetryWindow, retryWithin } from './retry-window';

/** Anything that hands out a Node request listener: a Koa app. */
export interface HttpApp {
  callback(): RequestListener;
}

export interface RunServerOptions {
  app: HttpApp;
  port: number;
  host?: string;
  logger: Logger;
  /**
   * Told once the listener has closed (step 1 below): ends answers that never finish on their own (event
   * streams), which the drain would otherwise wait for until `shutdownTimeoutMs`.
   */
  onClosing?: () => void;
  /** Closes what the service opened (database, timers), after the last request finished. */
  onClose?: () => Promise<void>;
  /** How long in-flight requests may take to finish after SIGTERM. */
  shutdownTimeoutMs?: number;
  /** Whether SIGTERM/SIGINT stop the server and exit the process (servers do; tests do not). */
  handleSignals?: boolean;
  /** Called with the server before it listens: limits and listeners of the caller's own. */
  configure?: (server: Server) => void;
  /** How long an idle connection stays open (KEEP_ALIVE_TIMEOUT_MS; services: SERVICE_KEEP_ALIVE_TIMEOUT_MS). */
  keepAliveTimeoutMs?: number;
}

export interface RunningServer {
  server: Server;
  port: number;
  close(): Promise<void>;
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

/**
 * Listens, and on SIGTERM/SIGINT drains and exits 0. The drain never closes a connection that a
 * client may be writing a request onto at that moment:
 *
 * 1. Stop listening, once the connections already waiting in the kernel's queue are taken in
 *    (they are served like the others). New connections are refused, which a client can always
 *    retry safely (the gateway does, for every method): the request never reached us. A
 *    replacement process can bind the port at once. Until then, answers keep their connection
 *    alive: a `Connection: close` sent while the listener is still open sends its client to open
 *    a new connection at once, which may land in the kernel's queue just as the listener closes,
 *    and be reset with its request unread (a 502 for a POST on a redeploy).
 * 2. Keep every open connection. Node's `server.close()` would close the idle ones at once, and
 *    a request already on its way over one of them (the gateway reuses pooled sockets) would
 *    then meet a reset. A client cannot tell whether a POST that met a reset was acted on, so it
 *    cannot resend it: that was the rolling restart's occasional 502.
 * 3. Answer whatever still arrives, with `Connection: close`, and close each connection once its
 *    response is sent. Requests in flight when the listener closes get the same header.
 * 4. Idle connections end the way they always do: the client retires them before the announced
 *    keep-alive timeout, or we close them when it runs out. Either way no client is writing onto
 *    them then, so the drain ends within about the keep-alive timeout once the last response is
 *    sent (for a service, as soon as the gateway retires its sockets), and `shutdownTimeoutMs`
 *    bounds it whatever the clients do.
 * 5. Run `onClose`.
 * Answers that never end on their own (event streams) are ended by `onClosing` once the listener
 * has closed: their clients reconnect, to this process's replacement or another replica.
 */
const netServerClose = NetServer.prototype.close;

export async function runServer(options: RunServerOptions): Promise<RunningServer> {
  const {
    app,
    port,
    host = '0.0.0.0',
    logger,
    onClosing,
    onClose,
    shutdownTimeoutMs = 10_000,
    handleSignals = true,
    keepAliveTimeoutMs = KEEP_ALIVE_TIMEOUT_MS,
  } = options;
  let closing = false;
  const handle = app.callback();
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
  // Responses not finished yet: on shutdown they are told `Connection: close` too (step 3).
  const inFlight = new Set<ServerResponse>();
  server.prependListener('request', (_req, res) => {
    inFlight.add(res);
    if (closing) res.setHeader('connection', 'close');
    res.on('close', () => inFlight.delete(res));
  });
  options.configure?.(server);

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const boundPort = typeof address === 'object' && address ? address.port : port;

  let closed: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closed ??= (async () => {
      // net.Server's close, not http.Server's: stop listening, and leave open connections to end
      // as described above (http.Server's would close the idle ones at once). Not before this
      // turn's poll has taken in the connections the kernel accepted while the loop was busy:
      // closing the listener resets them, their requests unread, and a POST that met a reset
      // cannot be sent again (the Compose scale-down's occasional 502). The second setImmediate
      // runs after the next poll, whichever phase this began in. Only then do answers say
      // `Connection: close` and streams end (step 1).
      const drained = new Promise<void>((resolve) =>
        setImmediate(() =>
          setImmediate(() => {
            netServerClose.call(server, () => resolve());
            closing = true;
            for (const res of inFlight) if (!res.headersSent) res.setHeader('connection', 'close');
            onClosing?.();
          }),
        ),
      );
      const timer = setTimeout(() => {
        logger.warn({ shutdownTimeoutMs }, 'in-flight requests did not finish in time; closing them');
        server.closeAllConnections();
      }, shutdownTimeoutMs);
      timer.unref();
      await drained;
      clearTimeout(timer);
      await onClose?.();
    })();
    return closed;
  };

  if (handleSignals) {
    const stop = (signal: NodeJS.Signals) => {
      logger.info({ signal }, 'shutting down');
      close().then(
        () => process.exit(0),
        (err: unknown) => {
          logger.error({ err }, 'shutdown failed');
          process.exit(1);
        },
      );
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  }

  logger.info({ host, port: boundPort }, 'listening');
  return { server, port: boundPort, close };
}

/**
 * Runs `pass` every `intervalMs`, never two at once: a tick that comes while a pass still runs is
 * skipped, so a slow pass neither overlaps the next nor piles up a backlog behind it. A failed
 * pass goes to `onError`, and the next one runs as usual. The timer never keeps the process
 * alive; the returned function stops it and waits for a pass under way, so a shutdown never cuts
 * one in half.
 */
export function repeatEvery(
  intervalMs: number,
  pass: () => Promise<unknown>,
  onError: (err: unknown) => void,
): () => Promise<void> {
  let running: Promise<void> | undefined;
  const timer = setInterval(() => {
    if (running) return;
    running = pass()
      .then(() => undefined, onError)
      .finally(() => {
        running = undefined;
      });
  }, intervalMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}
