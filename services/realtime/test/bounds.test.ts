/**
 * What the streams may hold, as clients that do not read meet it: a stream past its own bound, a
 * stream whose socket takes nothing, streams together past the process's budget, and an account
 * past its number of streams. A cut stream's client resumes with Last-Event-ID and loses nothing.
 */
import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { newUserId, StreamReader, tokenFor } from '@cs/testkit';
import { afterEach, describe, expect, it } from '@jest/globals';
import { type RealtimeHarness, startRealtime } from './helpers';

let h: RealtimeHarness | undefined;
const closers: (() => void)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) close();
  await h?.stop();
  h = undefined;
});

const bearer = (userId: string) => ({ authorization: `Bearer ${tokenFor(userId, '1h')}` });
const BIG = 'x'.repeat(50_000);
/**
 * 50 kB events, 20 MB in all: far more than the kernel's buffers take on the way to a client that
 * does not read (measured here: 4 to 6 MB, once the receive buffer has grown), so that Node's
 * buffer must hold the rest.
 */
const FLOOD = 400;

/** A client that opens a stream, reads its first bytes (the headers and `: open`), then nothing until told. */
class SilentClient {
  private readonly chunks: Buffer[] = [];
  closed = false;

  private constructor(private readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => this.chunks.push(chunk));
    socket.on('close', () => {
      this.closed = true;
    });
    socket.on('error', () => undefined);
  }

  static async open(url: string, path: string, headers: Record<string, string>): Promise<SilentClient> {
    const { hostname, port } = new URL(url);
    const socket = connect(Number(port), hostname);
    const client = new SilentClient(socket);
    closers.push(() => socket.destroy());
    const lines = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`);
    socket.write(`GET ${path} HTTP/1.1\r\nhost: ${hostname}\r\n${lines.join('')}\r\n`);
    const deadline = Date.now() + 3_000;
    while (!client.text().includes(': open') && Date.now() < deadline) await sleep(10);
    socket.pause();
    return client;
  }

  text(): string {
    return Buffer.concat(this.chunks).toString();
  }

  /** Reads again, until the server closes the connection or `timeoutMs` passes; whether it closed. */
  async readToEnd(timeoutMs = 5_000): Promise<boolean> {
    this.socket.resume();
    const deadline = Date.now() + timeoutMs;
    while (!this.closed && Date.now() < deadline) await sleep(20);
    return this.closed;
  }

  /** The ids of the whole events it received. */
  ids(): string[] {
    return [...this.text().matchAll(/id: (\S+)\nevent: [^\n]+\ndata: [^\n]*\n\n/g)].map((m) => m[1] as string);
  }
}

async function flood(harness: RealtimeHarness, owner: string, count = FLOOD): Promise<string[]> {
  const ids: string[] = [];
  for (let n = 0; n < count; n++) {
    const id = await harness.bus.publish(
      { topic: 'notes', kind: 'upsert', owner, data: { _id: `note-${n}`, body: BIG } },
      `${owner}-${n}`,
    );
    ids.push(id as string);
  }
  return ids;
}

describe('a client that does not read', () => {
  it('when big events pile up past its stream’s bound, then the stream is cut, and a resume from its last event loses nothing', async () => {
    h = await startRealtime({ REALTIME_MAX_BUFFERED: 256 * 1_024, REALTIME_RETENTION_BYTES: 64 * 1_048_576 });
    const user = newUserId();
    const silent = await SilentClient.open(h.url, '/api/realtime?topics=notes', bearer(user));

    const published = await flood(h, user);
    await sleep(500);

    expect(await silent.readToEnd()).toBe(true);
    const got = silent.ids();
    expect(got.length).toBeLessThan(published.length);
    expect(got).toEqual(published.slice(0, got.length));
    const resumed = await StreamReader.open(`${h.url}/api/realtime?topics=notes`, {
      ...bearer(user),
      'last-event-id': got.at(-1) ?? '0-0',
    });
    closers.push(() => resumed.close());
    const rest = await resumed.waitFor(published.length - got.length, 10_000);
    expect(rest.map((e) => e.id)).toEqual(published.slice(got.length));
  });

  it('when its socket takes nothing for the stall timeout, then the stream is cut, and a reader beside it is not', async () => {
    h = await startRealtime({
      REALTIME_MAX_BUFFERED: 256 * 1_048_576,
      REALTIME_BUFFER_BUDGET: 1_024 * 1_048_576,
      REALTIME_STALL_TIMEOUT: 1_000,
    });
    const user = newUserId();
    const silent = await SilentClient.open(h.url, '/api/realtime?topics=notes', bearer(user));
    const reader = await StreamReader.open(`${h.url}/api/realtime?topics=notes`, bearer(user));
    closers.push(() => reader.close());

    await flood(h, user);
    await reader.waitFor(FLOOD, 10_000);
    await sleep(2_500);

    expect(reader.events).toHaveLength(FLOOD);
    expect(reader.ended).toBe(false);
    expect(await silent.readToEnd()).toBe(true);
  });

  it('when unread streams together pass the process’s budget, then they are cut, and a stream that holds nothing is kept', async () => {
    h = await startRealtime({ REALTIME_MAX_BUFFERED: 256 * 1_048_576, REALTIME_BUFFER_BUDGET: 4 * 1_048_576 });
    const user = newUserId();
    const silent: SilentClient[] = [];
    for (let i = 0; i < 4; i++) silent.push(await SilentClient.open(h.url, '/api/realtime?topics=notes', bearer(user)));
    const bystander = await StreamReader.open(`${h.url}/api/realtime?topics=notes`, bearer(newUserId()));
    closers.push(() => bystander.close());

    await flood(h, user);

    for (const client of silent) expect(await client.readToEnd()).toBe(true);
    expect(bystander.ended).toBe(false);
  });
});

describe('streams per account', () => {
  it('when an account opens one stream more than it may, then 429 with Retry-After; once one closes, the next opens', async () => {
    h = await startRealtime({ REALTIME_STREAMS_PER_ACCOUNT: 2 });
    const harness = h;
    const user = newUserId();
    const open = async (headers: Record<string, string>, topics = 'notes,posts') => {
      const reader = await StreamReader.open(`${harness.url}/api/realtime?topics=${topics}`, headers);
      closers.push(() => reader.close());
      return reader;
    };
    const first = await open(bearer(user));
    await open(bearer(user));

    const over = await open(bearer(user));
    const anonymous = await Promise.all([1, 2, 3].map(() => open({}, 'posts')));
    const someoneElse = await open(bearer(newUserId()));
    first.close();
    await sleep(300);
    const next = await open(bearer(user));

    expect(over.response.status).toBe(429);
    expect(over.response.headers.get('retry-after')).toBe('30');
    expect(await over.response.json()).toEqual({ error: expect.stringContaining('Too many open streams') });
    expect(anonymous.map((r) => r.response.status)).toEqual([200, 200, 200]);
    expect(someoneElse.response.status).toBe(200);
    expect(next.response.status).toBe(200);
  });
});
