/**
 * The gateway in front of services hosted in its own process (server/): a request is handed
 * to the service's app in memory, and the client gets what it would get over HTTP: the body, the
 * gateway's headers, its rules on the answer's headers, its 504, streams as they are written, and
 * a connection that stays open for the next request.
 */
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { type Child, freePort, httpOk, REPO_ROOT, spawnChild, waitFor } from '@cs/devstack';
import { bearer, newUserId, TEST_JWT_SECRET } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

interface Seen {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string;
}

let child: Child;
let base: string;

beforeAll(async () => {
  const port = await freePort();
  child = spawnChild({
    name: 'in-process-gateway',
    command: process.execPath,
    args: [join(REPO_ROOT, 'gateway/dist/test/in-process-fixture.js')],
    env: { PORT: String(port), JWT_SECRET: TEST_JWT_SECRET, UPSTREAM_TIMEOUT: '300ms' },
    logFile: join(process.env.TEST_DATA_DIR ?? join(REPO_ROOT, '.data'), 'logs', `in-process-gateway-${port}.log`),
  });
  base = `http://127.0.0.1:${port}`;
  await waitFor('the gateway', () => httpOk(`${base}/healthz`), { child });
});

afterAll(async () => {
  await child?.stop();
});

/** Requests over one kept-alive connection: the port each answer came from says it is the same one. */
function onOneConnection(count: number, body: string, headers: Record<string, string>) {
  return new Promise<{ status: number; localPort: number; seen: Seen }[]>((resolve, reject) => {
    const { port } = new URL(base);
    const answers: { status: number; localPort: number; seen: Seen }[] = [];
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const next = () => {
      if (answers.length === count) {
        agent.destroy();
        return resolve(answers);
      }
      const req = request({ host: '127.0.0.1', port, method: 'POST', path: '/api/posts', agent, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const seen = JSON.parse(Buffer.concat(chunks).toString()) as Seen;
          answers.push({ status: res.statusCode ?? 0, localPort: req.socket?.localPort ?? 0, seen });
          next();
        });
      });
      req.on('error', reject);
      req.end(body);
    };
    next();
  });
}

describe('the gateway, with the services in its process', () => {
  it('when a POST has a body, then the app reads it whole, with the gateway’s headers, and the connection serves the next request', async () => {
    const body = JSON.stringify({ title: 'a title', content: 'some content' });
    const headers = { ...bearer(newUserId()), 'content-type': 'application/json', 'x-request-id': 'req-1' };

    const answers = await onOneConnection(3, body, headers);

    expect(answers.map((a) => a.status)).toEqual([201, 201, 201]);
    expect(new Set(answers.map((a) => a.localPort)).size).toBe(1);
    const seen = answers[2]?.seen;
    expect(seen).toMatchObject({ method: 'POST', url: '/api/posts', body });
    expect(seen?.headers['content-length']).toBe(String(Buffer.byteLength(body)));
    expect(seen?.headers['x-request-id']).toBe('req-1');
    expect(seen?.headers['x-internal-client-address']).toBe('127.0.0.1');
  });

  it('when the request carries a token, then the answer is no-store whatever the app said, and Server-Timing is dropped', async () => {
    const res = await fetch(`${base}/api/posts/my-posts`, { headers: bearer(newUserId()) });

    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('server-timing')).toBeNull();
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('when the request is anonymous, then the app’s caching stands', async () => {
    const res = await fetch(`${base}/api/posts`);

    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('public, max-age=60');
  });

  it('when the app does not begin its answer within the upstream timeout, then the client gets the gateway’s JSON 504', async () => {
    const started = Date.now();
    const res = await fetch(`${base}/api/posts/000000000000000000000009`);

    expect(res.status).toBe(504);
    expect(await res.json()).toEqual({ error: 'Upstream service timed out' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
  });

  it('when the app answers with a stream, then the client gets its first bytes while it stays open', async () => {
    const controller = new AbortController();
    const res = await fetch(`${base}/api/realtime?topics=posts`, { signal: controller.signal });
    const reader = res.body?.getReader();
    const first = await reader?.read();
    controller.abort();

    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    expect(Buffer.from(first?.value ?? []).toString()).toBe(': open\n\n');
  });
});
