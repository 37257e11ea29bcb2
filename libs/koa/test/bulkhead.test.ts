import { setTimeout as sleep } from 'node:timers/promises';
import type { HttpError } from '@cs/errors';
import { waitAside } from '@cs/lifecycle';
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

/** Lets every piece that can go on do so. */
const tick = () => new Promise((r) => setImmediate(r));

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

  it('when a running piece waits aside, then the next in line runs meanwhile, and once the wait ends the piece goes on before the rest of the line', async () => {
    const started: string[] = [];
    const g = gate(started);
    const bulkhead = createBulkhead({ name: 'test', concurrency: 1, perClient: 5, total: 5 });
    const steps: string[] = [];
    let endWait = () => {};
    const aside = bulkhead.run('a', async () => {
      steps.push('before the wait');
      await waitAside(() => new Promise<void>((resolve) => (endWait = resolve)));
      steps.push('after the wait');
      return 'aside';
    });
    await tick();
    const others = [bulkhead.run('b', g.piece('b')), bulkhead.run('c', g.piece('c'))];
    await tick();

    expect(started).toEqual(['b']);
    expect(bulkhead.load()).toEqual({ running: 1, waiting: 1 });
    endWait();
    await tick();
    // Back, but b has the place: the piece waits for it, first in line.
    expect(steps).toEqual(['before the wait']);
    expect(bulkhead.load()).toEqual({ running: 1, waiting: 2 });
    await g.finishOne();
    expect(steps).toEqual(['before the wait', 'after the wait']);
    expect(await aside).toBe('aside');
    expect(started).toEqual(['b', 'c']);
    await g.finishOne();
    expect(await Promise.all(others)).toEqual(['b', 'c']);
    expect(bulkhead.load()).toEqual({ running: 0, waiting: 0 });
  });

  it('when a piece’s waits aside overlap, follow one another, or are not awaited, then no more pieces than places ever work at once, and every place is freed', async () => {
    const bulkhead = createBulkhead({ name: 'test', concurrency: 2, perClient: 20, total: 20 });
    let inside = 0;
    let most = 0;
    /** Runs a stretch of a piece's work in its place, counting the pieces doing so. */
    const inPlace = async (ms: number) => {
      inside += 1;
      most = Math.max(most, inside);
      await sleep(ms);
      inside -= 1;
    };
    const pieces = [
      bulkhead.run('overlapping', async () => {
        await inPlace(2);
        await Promise.all([waitAside(() => sleep(20)), waitAside(() => sleep(5)).then(() => inPlace(3))]);
        await inPlace(2);
      }),
      bulkhead.run('one after another', async () => {
        for (let i = 0; i < 3; i++) {
          await waitAside(() => sleep(4));
          await inPlace(2);
        }
      }),
      // Ends while its wait is still aside: the place it takes again afterwards goes at once.
      bulkhead.run('not awaited', async () => {
        void waitAside(() => sleep(10));
      }),
      ...Array.from({ length: 10 }, (_, i) => bulkhead.run(`plain ${i}`, () => inPlace(3))),
    ];
    await Promise.all(pieces);
    await sleep(30);

    expect(most).toBe(2);
    expect(bulkhead.load()).toEqual({ running: 0, waiting: 0 });
  });

  it('when a piece ends while the place it waits for after waiting aside is still to come, then that place is freed as it comes', async () => {
    const g = gate([]);
    const bulkhead = createBulkhead({ name: 'test', concurrency: 1, perClient: 5, total: 5 });
    let endWait = () => {};
    let endWork = () => {};
    const piece = bulkhead.run('a', async () => {
      void waitAside(() => new Promise<void>((resolve) => (endWait = resolve)));
      await new Promise<void>((resolve) => (endWork = resolve));
    });
    await tick();
    const other = bulkhead.run('b', g.piece('b'));
    await tick();
    endWait();
    await tick();
    endWork();
    await piece;

    // b has the place; the place for the wait's end is still to come.
    expect(bulkhead.load()).toEqual({ running: 1, waiting: 1 });
    await g.finishOne();
    await other;
    expect(bulkhead.load()).toEqual({ running: 0, waiting: 0 });
  });
});
