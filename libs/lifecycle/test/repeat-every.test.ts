import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from '@jest/globals';
import { repeatEvery } from '../src';

describe('repeatEvery', () => {
  it('when a pass outlives the interval, then the ticks meanwhile are skipped: never two at once, no backlog', async () => {
    let running = 0;
    let most = 0;
    let passes = 0;
    const stop = repeatEvery(
      10,
      async () => {
        running += 1;
        most = Math.max(most, running);
        await sleep(35);
        running -= 1;
        passes += 1;
      },
      () => undefined,
    );
    await sleep(200);
    await stop();

    expect(passes).toBeGreaterThanOrEqual(2);
    // At most one pass per 35 ms, however many 10 ms ticks came: queued ticks would add up to ~20.
    expect(passes).toBeLessThanOrEqual(6);
    expect(most).toBe(1);
  });

  it('when a pass fails, then onError has it and the next pass runs as usual', async () => {
    const errors: unknown[] = [];
    let calls = 0;
    const stop = repeatEvery(
      10,
      async () => {
        calls += 1;
        if (calls === 1) throw new Error('first pass fails');
      },
      (err) => errors.push(err),
    );
    await sleep(100);
    await stop();

    expect(errors).toEqual([new Error('first pass fails')]);
    expect(calls).toBeGreaterThanOrEqual(2);
  });

  it('when stopped during a pass, then the stop waits for that one pass, and none starts after', async () => {
    let finished = 0;
    let started = 0;
    const stop = repeatEvery(
      10,
      async () => {
        started += 1;
        await sleep(60);
        finished += 1;
      },
      () => undefined,
    );
    await sleep(25); // inside the first pass
    await stop();
    expect({ started, finished }).toEqual({ started: 1, finished: 1 });
    const after = started;
    await sleep(60);
    expect(started).toBe(after);
  });
});
