/**
 * Answers stream through the gateway as the service writes them, and the upstream timeout is an
 * idle one: a long-lived answer that keeps sending (a Server-Sent Events stream) is never cut for
 * its length, while a service that falls silent still is. A client that leaves before its answer
 * is whole still gets its access-log line.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { eventually } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type GatewayProcess, spawnGateway } from './helpers';

const TIMEOUT_MS = 400;
const EVENTS = 8;
const EVERY_MS = 150; // 8 events over about 1.2 s: three times the gateway's timeout

let upstream: Server;
let gateway: GatewayProcess;

/** A real event stream: `events` events `everyMs` apart, then (unless `hangAfter`) the end. */
function streamEvents(res: import('node:http').ServerResponse, events: number, hangAfter = false) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  let sent = 0;
  const timer = setInterval(() => {
    res.write(`data: ${sent}\n\n`);
    sent += 1;
    if (sent < events) return;
    clearInterval(timer);
    if (!hangAfter) res.end();
  }, EVERY_MS);
  res.once('close', () => clearInterval(timer));
}

beforeAll(async () => {
  upstream = createServer((req, res) => {
    // `/api/posts?then=silent`: two events, then nothing more, the connection left open.
    if (req.url?.includes('then=silent')) return streamEvents(res, 2, true);
    // `/api/posts?headers-only`: the status line and headers at once, then nothing at all.
    if (req.url?.includes('headers-only')) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.flushHeaders();
      return;
    }
    streamEvents(res, EVENTS);
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  gateway = await spawnGateway({ POSTS_URL: url, UPSTREAM_TIMEOUT: `${TIMEOUT_MS}ms`, LOG_LEVEL: 'info' });
});
afterAll(async () => {
  await gateway?.stop();
  upstream?.closeAllConnections();
  await new Promise((resolve) => upstream?.close(resolve));
});

/** Reads an answer's body, noting when each chunk arrived (ms after the request was sent). */
async function readTimed(
  res: Response,
  sentAt: number,
): Promise<{ text: string; arrivals: number[]; error?: unknown }> {
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let text = '';
  const arrivals: number[] = [];
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { text, arrivals };
      arrivals.push(Date.now() - sentAt);
      text += decoder.decode(value, { stream: true });
    }
  } catch (error) {
    return { text, arrivals, error };
  }
}

describe('answers that stream', () => {
  it('when a service streams for longer than the upstream timeout while sending regularly, then every event arrives as it is sent and the stream ends whole', async () => {
    const sentAt = Date.now();
    const res = await fetch(`${gateway.url}/api/posts`);
    const { text, arrivals, error } = await readTimed(res, sentAt);

    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    expect(error).toBeUndefined();
    expect(text).toBe(Array.from({ length: EVENTS }, (_, i) => `data: ${i}\n\n`).join(''));
    // Longer than the timeout in all, and not buffered: the first event long before the last.
    expect(arrivals.at(-1)).toBeGreaterThan(2 * TIMEOUT_MS);
    expect(arrivals[0]).toBeLessThan((EVENTS - 2) * EVERY_MS);
  });

  it('when a service stops sending in the middle of its answer, then the answer is cut once it has been silent for the timeout', async () => {
    const sentAt = Date.now();
    const res = await fetch(`${gateway.url}/api/posts?then=silent`);
    const { text, arrivals, error } = await readTimed(res, sentAt);
    const endedAfter = Date.now() - sentAt;

    expect(res.status).toBe(200);
    expect(text).toBe('data: 0\n\ndata: 1\n\n');
    expect(error).toBeDefined();
    // Cut about TIMEOUT_MS after the last event, not left open.
    expect(endedAfter - (arrivals.at(-1) ?? 0)).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
    expect(endedAfter - (arrivals.at(-1) ?? 0)).toBeLessThan(TIMEOUT_MS + 2000);
  });

  it('when a service sends its headers and then nothing, then after the timeout the client gets a JSON 504 of ours alone, none of its headers', async () => {
    const sentAt = Date.now();
    const res = await fetch(`${gateway.url}/api/posts?headers-only`);
    const body = await res.json();
    const endedAfter = Date.now() - sentAt;

    expect(res.status).toBe(504);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(res.headers.get('x-request-id')).toBeTruthy();
    expect(body).toEqual({ error: 'Upstream service timed out' });
    expect(endedAfter).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
    expect(endedAfter).toBeLessThan(TIMEOUT_MS + 2000);
  });
});

describe('the access log', () => {
  /** The gateway's access-log line of the request sent with `requestId`, once it is written. */
  const lineOf = (requestId: string) =>
    eventually(`the gateway's access-log line of ${requestId}`, () =>
      readFileSync(gateway.logFile, 'utf8')
        .split('\n')
        .filter((l) => l.includes(requestId))
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .find((l) => l.requestId === requestId),
    );
  const send = (path: string, requestId: string, signal?: AbortSignal) =>
    fetch(`${gateway.url}${path}`, { headers: { 'x-request-id': requestId }, signal });
  const fields = (line: Record<string, unknown> | undefined) => ({
    method: line?.method,
    path: line?.path,
    status: line?.status,
    closedEarly: line?.closedEarly,
  });

  it('when a client leaves before its answer is whole, then the gateway still logs the request: with its status if the answer had begun, and that its connection closed early', async () => {
    const whole = `whole-${randomBytes(4).toString('hex')}`;
    const midStream = `mid-stream-${randomBytes(4).toString('hex')}`;
    const beforeHeaders = `before-headers-${randomBytes(4).toString('hex')}`;

    // Read to its end.
    await (await send('/api/posts', whole)).text();
    // Left after the first event of eight.
    const leaving = new AbortController();
    const res = await send('/api/posts', midStream, leaving.signal);
    await (res.body as ReadableStream<Uint8Array>).getReader().read();
    leaving.abort();
    // Left while the service had sent its headers to the gateway and nothing more (the gateway
    // sends them on with the first byte of the body), well before the upstream timeout.
    await expect(send('/api/posts?headers-only', beforeHeaders, AbortSignal.timeout(TIMEOUT_MS / 4))).rejects.toThrow();
    await sleep(TIMEOUT_MS); // past the 504 the gateway would then have sent to nobody

    expect(fields(await lineOf(whole))).toEqual({
      method: 'GET',
      path: '/api/posts',
      status: 200,
      closedEarly: undefined,
    });
    expect(fields(await lineOf(midStream))).toEqual({
      method: 'GET',
      path: '/api/posts',
      status: 200,
      closedEarly: true,
    });
    expect(fields(await lineOf(beforeHeaders))).toEqual({
      method: 'GET',
      path: '/api/posts',
      status: undefined,
      closedEarly: true,
    });
  });
});
