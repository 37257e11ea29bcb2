import { setTimeout as sleep } from 'node:timers/promises';
import type { HttpError } from '@cs/errors';
import { describe, expect, it } from '@jest/globals';
import { createBulkhead } from '../src/bulkhead';

/** A piece of work that ends when the test says, and records the order pieces started in. */
function gate(started: string[]) {
  const open: Array<() => void> = [];
  return {
    piece: (label: string) => () =>
      new Promise<string>((resolve) => {
        started.push(label);
        open.push(() => resolve(label));
      }),
    /** Ends the oldest running piece, and lets the next one start. */
    async finishOne() {
      open.shift()?.();
      await new Promise((r) => setImmediate(r));
    },
    running: () => open.length,
  };
}

const statusOf = async (work: Promise<unknown>) =>
  work.then(
    () => 200,
    (err: HttpError) => err.status,
  );

describe('a bulkhead', () => {
  it('when more pieces come than may run, then at most `concurrency` run at once and the rest start as places free', async () => {
    const started: string[] = [];
    const g = gate(started);
    const bulkhead = createBulkhead({ name: 'test', concurrency: 2, perClient: 10, total: 10 });
    const done = ['a', 'b', 'c', 'd'].map((l) => bulkhead.run('one', g.piece(l)));
    await new Promise((r) => setImmediate(r));

    expect(started).toEqual(['a', 'b']);
    await g.finishOne();
    expect(started).toEqual(['a', 'b', 'c']);
    for (let i = 0; i < 3; i++) await g.finishOne();
    expect(await Promise.all(done)).toEqual(['a', 'b', 'c', 'd']);
    expect(bulkhead.load()).toEqual({ running: 0, waiting: 0 });
  });

  it('when one client has many pieces waiting, then another client’s piece starts after at most one of theirs', async () => {
    const started: string[] = [];
    const g = gate(started);
    const bulkhead = createBulkhead({ name: 'test', concurrency: 1, perClient: 10, total: 20 });
    const all = ['a1', 'a2', 'a3', 'a4'].map((l) => bulkhead.run('a', g.piece(l)));
    await new Promise((r) => setImmediate(r));
    all.push(bulkhead.run('b', g.piece('b1')));

    while (g.running() > 0) await g.finishOne();
    await Promise.all(all);

    expect(started).toEqual(['a1', 'a2', 'b1', 'a3', 'a4']);
  });

  it('when a client’s own line is full, then it gets 429; when everyone’s is, then all get 503; both with Retry-After', async () => {
    const g = gate([]);
    const bulkhead = createBulkhead({ name: 'test', concurrency: 1, perClient: 2, total: 3, retryAfterS: 2 });
    const running = bulkhead.run('a', g.piece('running'));
    const waiting = [bulkhead.run('a', g.piece('a1')), bulkhead.run('a', g.piece('a2'))];

    const own = bulkhead.run('a', g.piece('a3'));
    expect(await statusOf(own)).toBe(429);
    await own.catch((err: HttpError) => expect(err.headers).toEqual({ 'Retry-After': '2' }));
    waiting.push(bulkhead.run('b', g.piece('b1')));
    expect(await statusOf(bulkhead.run('c', g.piece('c1')))).toBe(503);

    while (g.running() > 0) await g.finishOne();
    await Promise.all([running, ...waiting]);
  });

  it('when pieces wait in the priority line, then they start before those of the normal line', async () => {
    const started: string[] = [];
    const g = gate(started);
    const bulkhead = createBulkhead({ name: 'test', concurrency: 1, perClient: 5, total: 10 });
    const all = [bulkhead.run('x', g.piece('first'))];
    await new Promise((r) => setImmediate(r));
    all.push(bulkhead.run('crowd-1', g.piece('crowd-1')), bulkhead.run('crowd-2', g.piece('crowd-2')));
    all.push(bulkhead.run('known', g.piece('known'), { priority: true }));

    while (g.running() > 0) await g.finishOne();
    await Promise.all(all);

    expect(started).toEqual(['first', 'known', 'crowd-1', 'crowd-2']);
  });

  it('when the normal line is full, then a priority piece still gets a place in its own line, ahead of the crowd', async () => {
    const started: string[] = [];
    const g = gate(started);
    const bulkhead = createBulkhead({ name: 'test', concurrency: 1, perClient: 5, total: 2 });
    const all = [bulkhead.run('x', g.piece('first'))];
    await new Promise((r) => setImmediate(r));
    all.push(bulkhead.run('crowd-1', g.piece('crowd-1')), bulkhead.run('crowd-2', g.piece('crowd-2')));
    expect(await statusOf(bulkhead.run('crowd-3', g.piece('crowd-3')))).toBe(503);

    all.push(bulkhead.run('device', g.piece('device'), { priority: true }));
    while (g.running() > 0) await g.finishOne();
    await Promise.all(all);

    expect(started).toEqual(['first', 'device', 'crowd-1', 'crowd-2']);
  });

  it('when a piece fails, then its place is freed all the same', async () => {
    const bulkhead = createBulkhead({ name: 'test', concurrency: 1, perClient: 1, total: 1 });
    await expect(bulkhead.run('a', () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await bulkhead.run('a', async () => 'next')).toBe('next');
    expect(bulkhead.load()).toEqual({ running: 0, waiting: 0 });
  });

  it('when a piece waits longer than maxWaitMs, then it gets 503 with Retry-After and leaves the line to those behind it', async () => {
    const started: string[] = [];
    const g = gate(started);
    const bulkhead = createBulkhead({ name: 'test', concurrency: 1, perClient: 5, total: 5, maxWaitMs: 50 });
    const first = bulkhead.run('a', g.piece('first'));
    await new Promise((r) => setImmediate(r));
    const waited = bulkhead.run('b', g.piece('waited')).catch((err: HttpError) => err);
    await sleep(80);
    const later = bulkhead.run('c', g.piece('later'));

    const refusal = (await waited) as HttpError;
    expect(refusal.status).toBe(503);
    expect(refusal.headers).toEqual({ 'Retry-After': '1' });
    expect(bulkhead.load()).toEqual({ running: 1, waiting: 1 });
    while (g.running() > 0) await g.finishOne();
    expect(await Promise.all([first, later])).toEqual(['first', 'later']);
    expect(started).toEqual(['first', 'later']);
  });

  it('when pieces that may run together wait, then up to `batch` of them in turn share the place that frees, and free it when the last ends', async () => {
    const started: string[] = [];
    const g = gate(started);
    const bulkhead = createBulkhead({ name: 'test', concurrency: 1, perClient: 10, total: 20, batch: 3 });
    const all = [bulkhead.run('z', g.piece('first'))];
    await new Promise((r) => setImmediate(r));
    for (const label of ['a1', 'a2', 'a3', 'a4', 'a5']) all.push(bulkhead.run('a', g.piece(label), { together: true }));
    all.push(bulkhead.run('b', g.piece('b1'), { together: true }));
    all.push(bulkhead.run('c', g.piece('c1')));

    // In turn: a's first and b's may go together; c's may not, so the group stops before it.
    await g.finishOne();
    expect(started).toEqual(['first', 'a1', 'b1']);
    expect(bulkhead.load()).toEqual({ running: 1, waiting: 5 });
    // The place is b1's still: nothing starts until the last of the group ends.
    await g.finishOne();
    expect(started).toEqual(['first', 'a1', 'b1']);
    await g.finishOne();
    expect(started).toEqual(['first', 'a1', 'b1', 'c1']);
    // Then a's, three at most.
    await g.finishOne();
    expect(started).toEqual(['first', 'a1', 'b1', 'c1', 'a2', 'a3', 'a4']);
    while (g.running() > 0) await g.finishOne();
    await Promise.all(all);
    expect(started.at(-1)).toBe('a5');
    expect(bulkhead.load()).toEqual({ running: 0, waiting: 0 });
  });
});
