import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import { type Child, freePort, httpOk, REPO_ROOT, spawnChild, waitFor } from '@cs/devstack';
import { answerEmptyLog, emptyRevocationLog, isLogRead, TEST_FRONTEND_ORIGIN, TEST_JWT_SECRET } from '@cs/testkit';

export interface GatewayProcess {
  url: string;
  child: Child;
  /** Where its output goes: its log lines (at LOG_LEVEL, `warn` unless set). */
  logFile: string;
  stop(): Promise<number | string | null>;
}

/** The environment that sends every route of the gateway to one upstream. */
export function everyUpstreamAt(url: string): Record<string, string> {
  return { IDENTITY_URL: url, POSTS_URL: url, NOTES_URL: url, FILES_URL: url, REALTIME_URL: url };
}

/**
 * The built gateway as its own process, with the environment a deployment would give it; ready
 * once it has read its revocation list (from IDENTITY_URL, or from an empty log when none is given).
 */
export async function spawnGateway(env: Record<string, string>): Promise<GatewayProcess> {
  const log = env.IDENTITY_URL === undefined ? await emptyRevocationLog() : undefined;
  const port = await freePort();
  const logFile = join(process.env.TEST_DATA_DIR ?? join(REPO_ROOT, '.data'), 'logs', `gateway-${port}.log`);
  const child = spawnChild({
    name: 'gateway',
    command: process.execPath,
    args: [join(REPO_ROOT, 'gateway/dist/src/server.js')],
    env: {
      PORT: String(port),
      JWT_SECRET: TEST_JWT_SECRET,
      FRONTEND_ORIGIN: TEST_FRONTEND_ORIGIN,
      LOG_LEVEL: 'warn',
      ...(log ? { IDENTITY_URL: log.url } : {}),
      ...env,
    },
    logFile,
  });
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitFor('gateway', () => httpOk(`${url}/healthz`), { child });
    // Read twice: the first read is applied before the second one starts. (Not /readyz, which
    // would reach the upstreams a test is counting.)
    const reads = log?.reads ?? (() => logReads.get(env.IDENTITY_URL ?? '') ?? 0);
    const readsBefore = reads();
    await waitFor('gateway to read its revocation list', async () => reads() >= readsBefore + 2, { child });
  } catch (err) {
    // A gateway that never got ready is stopped here: no test holds it to stop it later.
    await child.stop();
    await log?.close();
    throw err;
  }
  return {
    url,
    child,
    logFile,
    stop: async () => {
      const code = await child.stop();
      await log?.close();
      return code;
    },
  };
}

/** Reads of the revocation log each echo upstream answered, by its URL. */
const logReads = new Map<string, number>();

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
  const listenPort = port || (await freePort());
  const url = `http://127.0.0.1:${listenPort}`;
  let resetDone = false;
  const server: Server = createServer((req, res) => {
    // As identity, it answers the revocation log (nothing revoked), and keeps no record of it.
    if (isLogRead(req)) {
      logReads.set(url, (logReads.get(url) ?? 0) + 1);
      return answerEmptyLog(res);
    }
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
  await new Promise<void>((resolve) => server.listen(listenPort, '127.0.0.1', resolve));
  return {
    url,
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

/**
 * A port on which no connection ever opens, as at an address whose container is gone: a process
 * listens there with a queue of one connection (Node takes a backlog of 0 as its default, 511),
 * then never runs its event loop again, so it takes none; the handshakes that fill its queue come
 * from here, and every later one goes unanswered.
 */
export async function unansweredPort(): Promise<{ port: number; close(): void }> {
  const child = spawn(
    process.execPath,
    [
      '-e',
      `const server = require('node:net').createServer();
       server.listen({ port: 0, host: '127.0.0.1', backlog: 1 }, () => {
         process.stdout.write(server.address().port + '\\n');
         Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
       });`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const [line] = (await once(child.stdout, 'data')) as [Buffer];
  const port = Number(line.toString().trim());
  const fillers = Array.from({ length: 4 }, () => connect(port, '127.0.0.1'));
  for (const filler of fillers) filler.on('error', () => {});
  return {
    port,
    close() {
      for (const filler of fillers) filler.destroy();
      child.kill('SIGKILL');
    },
  };
}
