import type { Server, ServerResponse } from 'node:http';
import { Server as NetServer } from 'node:net';
import type { Logger } from '@cs/log';
import { createHttpServer, type HttpApp, KEEP_ALIVE_TIMEOUT_MS } from './http-server';

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
  const server = createHttpServer(app.callback(), keepAliveTimeoutMs);
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
