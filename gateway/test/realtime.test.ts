/**
 * The realtime streams through the gateway, in front of the real services: an event arrives as
 * its write is answered, a quiet stream outlives the gateway's stream timeout on its keepalives,
 * the configured front-end origin may read a stream, and a ticket names its caller once.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { RunningSystem } from '@cs/devstack';
import { api, StreamReader, startTestSystem, TEST_FRONTEND_ORIGIN } from '@cs/testkit';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';

/**
 * Far below the defaults, so that the test waits out several of each; the timeout still leaves a
 * loaded machine time to answer 400 streams opened at once (it also bounds the wait for a
 * stream's first line: at 600 ms, 1 run in 20 saw some of them answered 504).
 */
const KEEPALIVE_MS = 400;
const STREAM_TIMEOUT_MS = 2_000;

let system: RunningSystem;
let http: ReturnType<typeof api>;
const readers: StreamReader[] = [];

beforeAll(async () => {
  system = await startTestSystem({
    env: {
      AUTH_RATE_LIMIT: '0',
      // The test's streams all come from 127.0.0.1: more of them than the per-address cap (256).
      CONNECTIONS_PER_ADDRESS: '0',
      REALTIME_KEEPALIVE: `${KEEPALIVE_MS}ms`,
      STREAM_TIMEOUT: `${STREAM_TIMEOUT_MS}ms`,
    },
  });
  http = api(system.gatewayUrl);
}, 60_000);
afterEach(() => {
  for (const reader of readers.splice(0)) reader.close();
});
afterAll(async () => {
  await system?.stop();
});

async function open(query: string, headers: Record<string, string> = {}): Promise<StreamReader> {
  const reader = await StreamReader.open(`${system.gatewayUrl}/api/realtime?${query}`, headers);
  readers.push(reader);
  return reader;
}

async function register(): Promise<string> {
  const email = `rt-${Date.now()}-${Math.random().toString(16).slice(2)}@example.com`;
  const res = await http.post('/api/auth/register').send({ email, password: 'password-123' });
  expect(res.status).toBe(201);
  return res.body.token as string;
}

/** Waits until an event of `kind` about `id` came, at most `timeoutMs`; when it came, after `from`. */
async function arrival(reader: StreamReader, kind: string, id: string, from: number, timeoutMs = 5_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const found = reader.events.find((e) => e.event === kind && (e.data as { _id?: string })._id === id);
    if (found) return { event: found, afterMs: Date.now() - from };
    await sleep(5);
  }
  return undefined;
}

describe('realtime, through the gateway', () => {
  it('when every service is up, then /readyz names realtime among them', async () => {
    const res = await http.get('/readyz');

    expect(res.status).toBe(200);
    expect(res.body.services.realtime).toBe(true);
  });

  it('when a post is published through the gateway, then an anonymous stream from the front-end origin gets it within a second of the answer', async () => {
    const reader = await open('topics=posts', { origin: TEST_FRONTEND_ORIGIN });
    const token = await register();
    const created = await http
      .post('/api/posts')
      .set({ Authorization: `Bearer ${token}` })
      .send({ title: 'Live', body: 'Pushed as it is published.', tags: ['live'] });
    expect(created.status).toBe(201);

    const published = await http
      .put(`/api/posts/${created.body._id}`)
      .set({ Authorization: `Bearer ${token}` })
      .send({ status: 'published' });
    const answeredAt = Date.now();
    expect(published.status).toBe(200);
    const seen = await arrival(reader, 'posts.upsert', created.body._id, answeredAt);

    expect(reader.response.status).toBe(200);
    expect(reader.response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(reader.response.headers.get('access-control-allow-origin')).toBe(TEST_FRONTEND_ORIGIN);
    expect(seen?.event.data).toEqual(published.body);
    expect(seen?.event.id).toMatch(/^\d+-\d+$/);
    expect(seen?.afterMs).toBeLessThan(1_000);
    // The draft before it was never on the public topic.
    expect(reader.events.map((e) => e.event)).toEqual(['posts.upsert']);
  });

  it('when 400 streams are open at once through one gateway, then every one is answered and gets the next post', async () => {
    const many = await Promise.all(Array.from({ length: 400 }, () => open('topics=posts&tag=crowd')));
    const token = await register();
    const created = await http
      .post('/api/posts')
      .set({ Authorization: `Bearer ${token}` })
      .send({ title: 'For the crowd', body: 'Four hundred readers at once.', tags: ['crowd'] });
    await http
      .put(`/api/posts/${created.body._id}`)
      .set({ Authorization: `Bearer ${token}` })
      .send({ status: 'published' })
      .expect(200);
    await Promise.all(many.map((reader) => reader.waitFor(1, 10_000)));

    expect(many.map((reader) => reader.response.status).filter((status) => status !== 200)).toEqual([]);
    expect(many.map((reader) => reader.events.length).filter((count) => count !== 1)).toEqual([]);
  }, 30_000);

  it('when a stream is quiet for longer than the gateway stream timeout, then its keepalives keep it open', async () => {
    const reader = await open('topics=posts&tag=nothing-is-tagged-so');
    await sleep(3 * STREAM_TIMEOUT_MS);

    expect(reader.response.status).toBe(200);
    expect(reader.ended).toBe(false);
    expect(reader.keepalives).toBeGreaterThanOrEqual(Math.floor((3 * STREAM_TIMEOUT_MS) / KEEPALIVE_MS) - 2);
  });

  it("when a ticket from the gateway opens a stream, then it gets the caller's notes, and the same ticket again is that stream's reconnect: the first is cut", async () => {
    const token = await register();
    const ticket = await http.post('/api/realtime/ticket').set({ Authorization: `Bearer ${token}` });
    expect(ticket.status).toBe(201);
    expect(ticket.body.expiresIn).toBe(30);

    const reader = await open(`topics=notes&ticket=${encodeURIComponent(ticket.body.ticket)}`);
    const note = await http
      .post('/api/notes')
      .set({ Authorization: `Bearer ${token}` })
      .send({ title: 'Mine' });
    const seen = await arrival(reader, 'notes.upsert', note.body._id, Date.now());
    const again = await open(`topics=notes&ticket=${encodeURIComponent(ticket.body.ticket)}`);

    expect(reader.response.status).toBe(200);
    expect(seen?.event.data).toEqual(note.body);
    expect(again.response.status).toBe(200);
    expect(await reader.waitForEnd(5_000)).toBe(true);
  });

  it('when a protected topic is asked without a token, or a topic is unknown, then the gateway passes on a JSON 401 or 400 and no stream', async () => {
    const anonymous = await open('topics=notes');
    const unknown = await open('topics=everything');
    const noTicket = await http.post('/api/realtime/ticket');

    expect(anonymous.response.status).toBe(401);
    expect(await anonymous.response.json()).toEqual({ error: expect.any(String) });
    expect(unknown.response.status).toBe(400);
    expect(await unknown.response.json()).toEqual({ error: expect.any(String) });
    expect(noTicket.status).toBe(401);
  });
});
