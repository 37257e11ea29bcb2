/**
 * A gateway with stand-in services hosted in its own process, as server/ hosts the real ones:
 * run as a child by in-process.test.ts (the gateway's proxy module is ESM, which jest does not
 * load). Every service is one app that echoes what it got into its answer's `x-seen` header, and
 * on some paths answers never, or as a stream. Listens on PORT; verifies tokens with JWT_SECRET.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createTokenVerifier, RevocationList } from '@cs/auth';
import { HostedServices, inProcessUrl } from '@cs/lifecycle';
import { createLogger } from '@cs/log';
import { createGateway } from '../src/app';
import { readConfig } from '../src/config';

function standIn(req: IncomingMessage, res: ServerResponse): void {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    if (req.url === '/api/posts/000000000000000000000009') return; // never answers
    if (req.url?.startsWith('/api/realtime')) {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.write(': open\n\n');
      return;
    }
    const seen = { method: req.method, url: req.url, headers: req.headers, body: Buffer.concat(chunks).toString() };
    res.setHeader('cache-control', 'public, max-age=60');
    res.setHeader('server-timing', 'db;dur=1');
    res.setHeader('content-type', 'application/json');
    res.statusCode = req.method === 'POST' ? 201 : 200;
    res.end(JSON.stringify(seen));
  });
}

const names = ['identity', 'posts', 'notes', 'files', 'realtime'];
const hosted = new HostedServices();
for (const name of names) hosted.host(name, { callback: () => standIn }, { keepAliveTimeoutMs: 30_000 });
const config = readConfig({
  JWT_SECRET: process.env.JWT_SECRET,
  ...Object.fromEntries(names.map((name) => [`${name.toUpperCase()}_URL`, inProcessUrl(name)])),
  UPSTREAM_TIMEOUT: process.env.UPSTREAM_TIMEOUT,
});
// Nothing revoked: the list is current from the start.
const revocations = new RevocationList();
revocations.apply({ entries: [], last: 0 });
const app = createGateway(config, createLogger({ name: 'gateway', level: 'silent' }), {
  tokens: createTokenVerifier(config.JWT_SECRET, revocations),
  reach: hosted,
});
createServer(app).listen(Number(process.env.PORT), '127.0.0.1');
