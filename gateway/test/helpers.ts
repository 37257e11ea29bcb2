import { createServer, type IncomingMessage, type Server } from 'node:http';
import { join } from 'node:path';
import { type Child, freePort, httpOk, REPO_ROOT, spawnChild, waitFor } from '@cs/devstack';
import { TEST_FRONTEND_ORIGIN, TEST_JWT_SECRET } from '@cs/testkit';

export interface GatewayProcess {
  url: string;
  child: Child;
  stop(): Promise<number | string | null>;
}

/** The environment that sends every route of the gateway to one upstream. */
export function everyUpstreamAt(url: string): Record<string, string> {
  return { IDENTITY_URL: url, POSTS_URL: url, NOTES_URL: url, FILES_URL: url };
}

/** The built gateway as its own process, with the environment a deployment would give it. */
export async function spawnGateway(env: Record<string, string>): Promise<GatewayProcess> {
  const port = await freePort();
  const child = spawnChild({
    name: 'gateway',
    command: process.execPath,
    args: [join(REPO_ROOT, 'gateway/dist/src/server.js')],
    env: {
      PORT: String(port),
      JWT_SECRET: TEST_JWT_SECRET,
      FRONTEND_ORIGIN: TEST_FRONTEND_ORIGIN,
      LOG_LEVEL: 'warn',
      ...env,
    },
    logFile: join(process.env.TEST_DATA_DIR ?? join(REPO_ROOT, '.data'), 'logs', `gateway-${port}.log`),
  });
  const url = `http://127.0.0.1:${port}`;
  await waitFor('gateway', () => httpOk(`${url}/healthz`), { child });
  return { url, child, stop: () => child.stop() };
}

export interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/**
 * A real upstream that records what reached it and answers with it, after `delayMs`, on `port`
 * (a free one by default). With `resetReused`, a second request on a kept-alive connection is
 * met by a reset instead, as when a server closes an idle connection as the request arrives.
 * With `resetFirst`, the first request of all is, on its new connection: as when a replica closes
 * its listener to drain while the connection still waits in its queue.
 */
export async function echoUpstream({
  delayMs = 0,
  answer = true,
  port = 0,
  resetReused = false,
  resetFirst = false,
} = {}) {
  const seen: Seen[] = [];
  const served = new WeakSet<object>();
  let resetDone = false;
  const server: Server = createServer((req, res) => {
    if ((resetReused && served.has(req.socket)) || (resetFirst && !resetDone)) {
      resetDone = true;
      req.socket.resetAndDestroy();
      return;
    }
    served.add(req.socket);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const entry = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
      };
      seen.push(entry);
      if (!answer) return;
      setTimeout(() => {
        // What a service's cacheable read carries.
        res.writeHead(200, {
          'content-type': 'application/json',
          'cache-control': 'private, no-cache',
          'server-timing': 'db;dur=1.2, app;dur=2.5',
        });
        res.end(JSON.stringify(entry));
      }, delayMs);
    });
  });
  server.keepAliveTimeout = 65_000;
  let connections = 0;
  server.on('connection', () => {
    connections += 1;
  });
  const listenPort = port || (await freePort());
  await new Promise<void>((resolve) => server.listen(listenPort, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${listenPort}`,
    seen,
    /** TCP connections accepted so far. */
    connections: () => connections,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
