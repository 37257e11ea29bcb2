/**
 * The event bus on a real redis-server (Debian's, started here on a port of its own).
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { freePort, REPO_ROOT, type RunningServer, startRedis } from '@cs/devstack';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { audienceOf, connectBus, createEventBus, type StoredEvent } from '../src/index';

let server: RunningServer;
let redis: Redis;

beforeAll(async () => {
  server = await startRedis({ dataDir: join(REPO_ROOT, '.data', 'test', `bus-${randomBytes(3).toString('hex')}`) });
  redis = new Redis(server.url);
});
afterAll(async () => {
  redis?.disconnect();
  await server?.stop();
});

const busOn = (name: string, keepEvents = 100, keepMs = 60_000, keepBytes = 1_048_576) =>
  createEventBus(redis, { stream: `test:${name}`, retention: { keepMs, keepEvents, keepBytes } });
const event = (n: number) => ({ topic: 'posts', kind: 'upsert' as const, data: { n } });
const numbers = (events: StoredEvent[]) => events.map((e) => (e.data as { n: number }).n);

describe('the event bus', () => {
  it('when one event is published twice under its key, then the stream holds it once, and the second publish says so', async () => {
    const bus = busOn('once');
    const first = await bus.publish(event(1), 'post-1-v2');
    const again = await bus.publish(event(1), 'post-1-v2');

    expect(first).toMatch(/^\d+-\d+$/);
    expect(again).toBeNull();
    const read = await bus.after('0-0', 10);
    expect(read.gap ? 'gap' : numbers(read.events)).toEqual([1]);
  });

  it('when a reader resumes after an id, then it gets every later event in order, a page at a time', async () => {
    const bus = busOn('resume');
    const ids: string[] = [];
    for (let n = 1; n <= 5; n++) ids.push((await bus.publish(event(n), `resume-${n}`)) as string);

    const page = await bus.after(ids[1] as string, 2);
    const rest = await bus.after(ids[3] as string, 10);

    expect(page.gap ? 'gap' : numbers(page.events)).toEqual([3, 4]);
    expect(rest.gap ? 'gap' : numbers(rest.events)).toEqual([5]);
    expect(await bus.newest()).toBe(ids[4]);
  });

  it('when events older than the retention and beyond its count are trimmed, then a reader behind them gets a gap, and one after them does not', async () => {
    const bus = busOn('trim', 3, 1);
    const ids: string[] = [];
    for (let n = 1; n <= 6; n++) ids.push((await bus.publish(event(n), `trim-${n}`)) as string);

    expect(await bus.trim(Date.now() + 10)).toBe(3);

    expect(await bus.after(ids[0] as string, 10)).toEqual({ gap: true });
    const kept = await bus.after(ids[2] as string, 10);
    expect(kept.gap ? 'gap' : numbers(kept.events)).toEqual([4, 5, 6]);
  });

  it('when events are within their time, then trimming keeps them even past the count', async () => {
    const bus = busOn('young', 2, 60_000);
    for (let n = 1; n <= 4; n++) await bus.publish(event(n), `young-${n}`);

    expect(await bus.trim()).toBe(0);
    const all = await bus.after('0-0', 10);
    expect(all.gap ? 'gap' : numbers(all.events)).toEqual([1, 2, 3, 4]);
  });

  it('when the id is not one of the stream’s (garbage, or after its newest), then resuming from it is a gap', async () => {
    const bus = busOn('foreign');
    await bus.publish(event(1), 'foreign-1');

    expect(await bus.after('not-an-id', 10)).toEqual({ gap: true });
    expect(await bus.after(`${Date.now() + 60_000}-0`, 10)).toEqual({ gap: true });
  });

  it('when a follower follows from the newest id, then it gets each event published after, in order', async () => {
    const bus = busOn('follow');
    await bus.publish(event(0), 'follow-0');
    const got: StoredEvent[] = [];
    const follower = bus.follow(
      await bus.newest(),
      (events) => got.push(...events),
      () => undefined,
    );
    try {
      for (let n = 1; n <= 3; n++) await bus.publish(event(n), `follow-${n}`);
      const deadline = Date.now() + 5_000;
      while (got.length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    } finally {
      follower.stop();
    }

    expect(numbers(got)).toEqual([1, 2, 3]);
  });
});

describe('reading by audience, and bounds in bytes', () => {
  const note = (owner: string, n: number, size = 10) => ({
    topic: 'notes',
    kind: 'upsert' as const,
    owner,
    data: { n, body: 'x'.repeat(size) },
  });

  it('when a resume names audiences, then it reads only their events, in order across them', async () => {
    const bus = busOn('audiences');
    const from = (await bus.publish(event(0), 'aud-0')) as string;
    await bus.publish(note('ann', 1), 'aud-1');
    await bus.publish(note('bob', 2), 'aud-2');
    await bus.publish(event(3), 'aud-3');
    await bus.publish(note('bob', 4), 'aud-4');
    await bus.publish(note('ann', 5), 'aud-5');

    const anns = await bus.after(from, 10, { audiences: ['posts', audienceOf({ topic: 'notes', owner: 'ann' })] });
    const publicOnly = await bus.after('0-0', 10, { audiences: ['posts'] });
    const paged = await bus.after(from, 2, { audiences: ['posts', 'notes@ann'] });

    expect(anns.gap ? 'gap' : numbers(anns.events)).toEqual([1, 3, 5]);
    expect(anns.gap ? 'gap' : anns.more).toBe(false);
    expect(publicOnly.gap ? 'gap' : numbers(publicOnly.events)).toEqual([0, 3]);
    expect(paged.gap ? 'gap' : [numbers(paged.events), paged.more]).toEqual([[1, 3], true]);
  });

  it('when a page reaches its bytes, then it ends there, with at least one event and more to come', async () => {
    const bus = busOn('page-bytes');
    for (let n = 1; n <= 3; n++) await bus.publish(note('ann', n, 1_000), `page-bytes-${n}`);

    const first = await bus.after('0-0', 10, { maxBytes: 1_500 });
    const tiny = await bus.after('0-0', 10, { maxBytes: 1 });

    expect(first.gap ? 'gap' : [numbers(first.events), first.more]).toEqual([[1], true]);
    expect(tiny.gap ? 'gap' : [numbers(tiny.events), tiny.more]).toEqual([[1], true]);
  });

  it('when the events pass the retention’s bytes, then each publish drops the oldest with their filings, and a reader behind them gets a gap', async () => {
    const bus = busOn('bytes', 100, 60_000, 3_500);
    const ids: string[] = [];
    for (let n = 1; n <= 6; n++) ids.push((await bus.publish(note('ann', n, 1_000), `bytes-${n}`)) as string);

    const kept = await bus.after(ids[2] as string, 10, { audiences: ['notes@ann'] });
    expect(kept.gap ? 'gap' : numbers(kept.events)).toEqual([4, 5, 6]);
    expect(await bus.after(ids[1] as string, 10, { audiences: ['notes@ann'] })).toEqual({ gap: true });
    expect(await redis.xlen('test:bytes')).toBe(3);
    expect(await redis.xlen('test:bytes:audience:notes@ann')).toBe(3);
    expect(Number(await redis.get('test:bytes:bytes'))).toBeLessThanOrEqual(3_500);
  });

  it('when the reader trims with a lower bound in bytes, then every publisher keeps to it', async () => {
    const publisher = busOn('bound', 100, 60_000, 1_048_576);
    const reader = busOn('bound', 100, 60_000, 2_500);
    await reader.trim();
    for (let n = 1; n <= 4; n++) await publisher.publish(note('ann', n, 1_000), `bound-${n}`);

    expect(await redis.xlen('test:bound')).toBe(2);
  });

  it('when trimming drops an owner’s last events, then their filing goes too', async () => {
    const bus = busOn('trim-filed', 1, 1);
    await bus.publish(note('cid', 1), 'trim-filed-1');
    await bus.publish(note('dee', 2), 'trim-filed-2');

    expect(await bus.trim(Date.now() + 10)).toBe(1);
    expect(await redis.exists('test:trim-filed:audience:notes@cid')).toBe(0);
    expect(await redis.xlen('test:trim-filed:audience:notes@dee')).toBe(1);
  });
});

describe('connecting to the bus', () => {
  it('when Redis starts after the reader asked for it, then connectBus resolves once Redis answers, and told each failed attempt', async () => {
    const port = await freePort();
    const failed: number[] = [];
    const connecting = connectBus(`redis://127.0.0.1:${port}`, { onRetry: (attempt) => failed.push(attempt) });
    await new Promise((resolve) => setTimeout(resolve, 500));
    const late = await startRedis({ dataDir: join(REPO_ROOT, '.data', 'test', `bus-late-${port}`), port });
    try {
      const client = await connecting;
      expect(await client.ping()).toBe('PONG');
      expect(failed.length).toBeGreaterThan(0);
      client.disconnect();
    } finally {
      await late.stop();
    }
  });

  it('when Redis never answers, then connectBus fails within its startup bound, naming the address', async () => {
    const port = await freePort();
    const startedAt = Date.now();

    await expect(connectBus(`redis://127.0.0.1:${port}`, { startupTimeoutMs: 400 })).rejects.toThrow(
      `the bus at redis://127.0.0.1:${port} did not answer within 400 ms`,
    );
    expect(Date.now() - startedAt).toBeLessThan(2_000);
  });
});
