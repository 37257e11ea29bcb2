/**
 * A socket that never finishes its request's headers only holds a file descriptor: the gateway
 * closes it HEADERS_TIMEOUT_MS after it connected, give or take the check interval, with a JSON
 * 408. The review's attacker held 20,200 of them open for as long as it liked.
 */
import { connect } from 'node:net';
import { CONNECTIONS_CHECK_INTERVAL_MS, HEADERS_TIMEOUT_MS } from '@cs/lifecycle';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { echoUpstream, everyUpstreamAt, type GatewayProcess, spawnGateway } from './helpers';

let upstream: Awaited<ReturnType<typeof echoUpstream>>;
let gateway: GatewayProcess;

beforeAll(async () => {
  upstream = await echoUpstream();
  gateway = await spawnGateway(everyUpstreamAt(upstream.url));
});
afterAll(async () => {
  await gateway?.stop();
  await upstream?.close();
});

/** Connects, writes `sent` and nothing more; what came back and when the gateway closed it. */
function trickle(sent: string): Promise<{ closedAfter: number; received: string }> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    let received = '';
    const socket = connect({ host: '127.0.0.1', port: Number(new URL(gateway.url).port) }, () => socket.write(sent));
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      received += chunk;
    });
    socket.once('error', reject);
    socket.once('close', () => resolve({ closedAfter: Date.now() - started, received }));
  });
}

// The longest it may take, with a second for a busy machine.
const BOUND = HEADERS_TIMEOUT_MS + CONNECTIONS_CHECK_INTERVAL_MS + 1_000;

describe('requests whose headers do not arrive', () => {
  it(`when a client sends half its headers and stops, then the gateway answers 408 and closes the connection within ${BOUND / 1000} s`, async () => {
    const [half, nothing] = await Promise.all([
      trickle('GET /api/posts HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: appli'),
      trickle(''),
    ]);

    for (const { closedAfter, received } of [half, nothing]) {
      expect(closedAfter).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_MS - 100);
      expect(closedAfter).toBeLessThan(BOUND);
      expect(received).toMatch(/^HTTP\/1\.1 408 /);
      expect(received).toContain('{"error":"Request timed out"}');
    }
    expect(upstream.seen).toHaveLength(0);
  }, 30_000);
});
