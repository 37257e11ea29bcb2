/**
 * Connections per client address, at a gateway that clients reach directly: an address that holds
 * its cap gets 429 on its next connection while another address is served, and is served again
 * once its connections close. The clients' sockets are bound to other loopback addresses
 * (127.0.0.2, 127.0.0.3: all of 127.0.0.0/8 is loopback on Linux), so they are different clients.
 */
import { type ClientRequest, createServer, type IncomingHttpHeaders, request, type ServerResponse } from 'node:http';
import { connect } from 'node:net';
import { freePort } from '@cs/devstack';
import { messages } from '@cs/errors';
import { eventually } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { REFUSED_GRACE_MS } from '../src/connection-limits';
import { everyUpstreamAt, type GatewayProcess, spawnGateway } from './helpers';

const CAP = 20;
const HOLDER = '127.0.0.2';
const BYSTANDER = '127.0.0.3';

/** An upstream that holds every request with `hold` in its query until the caller goes, as an event stream would. */
async function holdingUpstream() {
  const held = new Set<ServerResponse>();
  const server = createServer((req, res) => {
    if (req.url?.includes('hold')) {
      held.add(res);
      res.once('close', () => held.delete(res));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"served":true}');
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${port}`,
    held: () => held.size,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** One GET on a connection of its own, from `localAddress`. */
function get(base: string, path: string, localAddress: string): { req: ClientRequest; answer: Promise<Answer> } {
  const req = request(`${base}${path}`, { agent: false, localAddress });
  const answer = new Promise<Answer>((resolve, reject) => {
    req.once('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.once('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      res.once('error', reject);
    });
    req.once('error', reject);
  });
  req.end();
  return { req, answer };
}

let upstream: Awaited<ReturnType<typeof holdingUpstream>>;
let gateway: GatewayProcess;
let behindProxy: GatewayProcess;

beforeAll(async () => {
  upstream = await holdingUpstream();
  // Identity is left out: its revocation log comes from spawnGateway's own, with nothing revoked.
  const { IDENTITY_URL: _identity, ...routes } = everyUpstreamAt(upstream.url);
  const env = { ...routes, CONNECTIONS_PER_ADDRESS: String(CAP), RATE_LIMIT: '0' };
  [gateway, behindProxy] = await Promise.all([spawnGateway(env), spawnGateway({ ...env, TRUST_PROXY: '1' })]);
});
afterAll(async () => {
  await Promise.all([gateway?.stop(), behindProxy?.stop()]);
  await upstream?.close();
});

/** `count` requests from `from` that the upstream holds, each on its own connection; `release` ends them. */
async function hold(base: string, from: string, count: number) {
  const before = upstream.held();
  const requests = Array.from({ length: count }, (_, i) => get(base, `/api/posts?hold=${i}`, from));
  for (const { answer } of requests) answer.catch(() => {});
  await eventually(
    `${count} requests held`,
    () => upstream.held(),
    (held) => held === before + count,
  );
  return {
    release: async () => {
      for (const { req } of requests) req.destroy();
      await eventually(
        'the held requests let go',
        () => upstream.held(),
        (held) => held === before,
      );
    },
  };
}

describe('connections per client address', () => {
  it('when one address holds its cap of connections, then its next one is answered 429 while another address is served', async () => {
    const holder = await hold(gateway.url, HOLDER, CAP);
    try {
      const refused = await get(gateway.url, '/api/posts', HOLDER).answer;
      const bystander = await get(gateway.url, '/api/posts', BYSTANDER).answer;

      expect(refused.status).toBe(429);
      expect(JSON.parse(refused.body)).toEqual({ error: messages.tooManyConnections });
      expect(refused.headers['content-type']).toMatch(/^application\/json/);
      expect(refused.headers['retry-after']).toBe('1');
      expect(refused.headers.connection).toBe('close');
      expect(bystander.status).toBe(200);
      expect(JSON.parse(bystander.body)).toEqual({ served: true });
      expect(upstream.held()).toBe(CAP);
    } finally {
      await holder.release();
    }
    // Each connection that closed gave its place back.
    await eventually(
      'the holder served again',
      async () => (await get(gateway.url, '/api/posts', HOLDER).answer).status,
      (status) => status === 200,
    );
  });

  it('when a connection over the cap sends nothing, then it is closed within the grace it has for its request', async () => {
    const holder = await hold(gateway.url, HOLDER, CAP);
    try {
      const started = Date.now();
      const closedAfter = await new Promise<number>((resolve, reject) => {
        const socket = connect({ host: '127.0.0.1', port: Number(new URL(gateway.url).port), localAddress: HOLDER });
        socket.on('data', () => reject(new Error('an answer to no request')));
        socket.on('error', () => {});
        socket.once('close', () => resolve(Date.now() - started));
      });

      expect(closedAfter).toBeGreaterThanOrEqual(REFUSED_GRACE_MS - 100);
      expect(closedAfter).toBeLessThan(REFUSED_GRACE_MS + 1_000);
    } finally {
      await holder.release();
    }
  });

  it('when the peer is a trusted proxy (TRUST_PROXY), then its connections are not counted: the balancer caps per client', async () => {
    const proxy = await hold(behindProxy.url, HOLDER, CAP + 5);
    try {
      expect((await get(behindProxy.url, '/api/posts', HOLDER).answer).status).toBe(200);
    } finally {
      await proxy.release();
    }
  });
});
