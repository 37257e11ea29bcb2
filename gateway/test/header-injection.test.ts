/**
 * Header injection, which fetch refuses to send, so over a raw socket: CR, LF, NUL and folded
 * lines in header values, and encoded CRLF in paths. Each gets a 4xx JSON answer, nothing is
 * injected into the response, and no smuggled header reaches the service.
 */
import { connect } from 'node:net';
import { newUserId, tokenFor } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { echoUpstream, everyUpstreamAt, type GatewayProcess, spawnGateway } from './helpers';

type Upstream = Awaited<ReturnType<typeof echoUpstream>>;
let upstream: Upstream;
let gateway: GatewayProcess;
const token = tokenFor(newUserId());

beforeAll(async () => {
  upstream = await echoUpstream();
  gateway = await spawnGateway(everyUpstreamAt(upstream.url));
});
afterAll(async () => {
  await gateway?.stop();
  await upstream?.close();
});

/**
 * Sends bytes as they are and reads the answer until the gateway closes the connection (it does
 * after a refused request, and after any answer to `Connection: close`).
 */
function raw(
  request: string,
): Promise<{ status: number; head: string; headers: Record<string, string>; body: string; text: string }> {
  const { port } = new URL(gateway.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1', () => socket.write(request));
    socket.setTimeout(5000, () => socket.destroy());
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const [head = '', body = ''] = text.split('\r\n\r\n');
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const at = line.indexOf(':');
        headers[line.slice(0, at).toLowerCase()] = line.slice(at + 1).trim();
      }
      resolve({ status: Number(statusLine.split(' ')[1]), head, headers, body, text });
    });
  });
}

const INJECTIONS: [string, string][] = [
  [
    'a bare CR in a header value',
    `GET /api/posts HTTP/1.1\r\nHost: x\r\nX-Request-Id: abc\rSet-Cookie: evil=1\r\n\r\n`,
  ],
  [
    'a NUL in a header value',
    `GET /api/posts HTTP/1.1\r\nHost: x\r\nX-Request-Id: abc\u0000Set-Cookie: evil=1\r\n\r\n`,
  ],
  [
    'a folded header line (obs-fold)',
    `GET /api/posts HTTP/1.1\r\nHost: x\r\nX-Request-Id: abc\r\n Set-Cookie: evil=1\r\n\r\n`,
  ],
  [
    'CR in the Authorization header',
    `GET /api/notes HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\rX-User-Id: victim\r\n\r\n`,
  ],
  ['a space in the request target', `GET /api/posts/a b HTTP/1.1\r\nHost: x\r\n\r\n`],
  ['a header name with a space', `GET /api/posts HTTP/1.1\r\nHost: x\r\nX Bad: 1\r\n\r\n`],
  ['a 20 kB header', `GET /api/posts HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`],
  [
    'two Content-Length headers (smuggling)',
    `POST /api/notes HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 2\r\nContent-Length: 40\r\n\r\n{}`,
  ],
  [
    'Content-Length with Transfer-Encoding (smuggling)',
    `POST /api/notes HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /api/posts HTTP/1.1\r\nHost: x\r\n\r\n`,
  ],
];

describe('header injection over a raw socket', () => {
  it.each(INJECTIONS)(
    'when a request carries %s, then a 4xx JSON answer, nothing injected, nothing forwarded',
    async (_name, request) => {
      const seenBefore = upstream.seen.length;
      const res = await raw(request);

      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(typeof (JSON.parse(res.body) as { error?: unknown }).error).toBe('string');
      expect(res.text.toLowerCase()).not.toContain('set-cookie');
      expect(res.text).not.toContain('evil=1');
      expect(upstream.seen.length).toBe(seenBefore);
    },
  );

  it('when CRLF ends the request target early, then the rest is only request headers: nothing reaches the answer', async () => {
    const seenBefore = upstream.seen.length;
    const res = await raw(`GET /api/posts/abc\r\nSet-Cookie: evil=1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);

    // (The echoing upstream repeats the request headers in its body; what matters is the head.)
    expect(res.head.toLowerCase()).not.toContain('set-cookie');
    expect(upstream.seen.slice(seenBefore).map((s) => s.url)).toEqual(['/api/posts/abc']);
  });

  it('when CRLF comes percent-encoded in a path or a request id, then it stays data: no header is added', async () => {
    const encoded = await raw(
      `GET /api/posts/%0d%0aSet-Cookie:%20evil=1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
    );
    expect(encoded.head.toLowerCase()).not.toContain('set-cookie');

    const id = await raw(
      `GET /api/posts HTTP/1.1\r\nHost: x\r\nX-Request-Id: %0d%0aSet-Cookie:%20evil=1\r\nConnection: close\r\n\r\n`,
    );
    expect(id.headers['x-request-id']).toMatch(/^[\w-]+$/);
    expect(id.head.toLowerCase()).not.toContain('set-cookie');
  });
});
