import type { RequestListener, Server, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from '@cs/log';

/** Anything that hands out a Node request listener: a Koa app. */
export interface HttpApp {
  callback(): RequestListener;
}

export interface RunServerOptions {
  app: HttpApp;
  port: number;
  host?: string;
  logger: Logger;
  /** Closes what the service opened (database, timers), after the last request finished. */
  onClose?: () => Promise<void>;
  /** How long in-flight requests may take to finish after SIGTERM. */
  shutdownTimeoutMs?: number;
  /** Whether SIGTERM/SIGINT stop the server and exit the process (servers do; tests do not). */
  handleSignals?: boolean;
}

export interface RunningServer {
  server: Server;
  port: number;
  close(): Promise<void>;
}

/**
 * Longer than any client pool's idle timeout (the gateway's agent uses 30 s), so a pooled socket
 * is never closed by us while the gateway is about to reuse it.
 */
const KEEP_ALIVE_TIMEOUT_MS = 65_000;

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

/**
 * Listens, and on SIGTERM/SIGINT: stops accepting, tells keep-alive clients to go elsewhere
 * (`Connection: close`), lets in-flight requests finish within the bound, closes the rest, runs
 * `onClose`, and exits 0.
 */
export async function runServer(options: RunServerOptions): Promise<RunningServer> {
  const { app, port, host = '0.0.0.0', logger, onClose, shutdownTimeoutMs = 10_000, handleSignals = true } = options;
  let closing = false;
  const server = createServer(app.callback());
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  server.headersTimeout = KEEP_ALIVE_TIMEOUT_MS + 1000;
  server.requestTimeout = 30_000;
  server.on('clientError', answerMalformed);
  // Responses not finished yet. On shutdown they are told `Connection: close`, and each
  // connection is closed as soon as it goes idle, so draining ends with the last response.
  const inFlight = new Set<ServerResponse>();
  server.prependListener('request', (_req, res) => {
    inFlight.add(res);
    if (closing) res.setHeader('connection', 'close');
    res.once('close', () => {
      inFlight.delete(res);
      if (closing) setImmediate(() => server.closeIdleConnections());
    });
  });

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
      closing = true;
      for (const res of inFlight) if (!res.headersSent) res.setHeader('connection', 'close');
      const drained = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
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

  logger.info({ port: boundPort }, 'listening');
  return { server, port: boundPort, close };
}
