/**
 * The supervisor's wait before it starts the one process again (restart-backoff.ts): at once after
 * a crash, longer and longer while it keeps crashing soon after each start, never past the cap.
 */
import { expect, it } from '@jest/globals';
import { restartBackoff } from '../src/restart-backoff';

it('when the process crashes again and again soon after each start, then the first restart is at once and each wait doubles up to the cap', () => {
  const backoff = restartBackoff({ firstMs: 1000, capMs: 8000, stableMs: 60_000 });
  const waits = Array.from({ length: 7 }, () => backoff.next(2000));
  expect(waits).toEqual([0, 1000, 2000, 4000, 8000, 8000, 8000]);
});

it('when the process ran longer than the stable time before it crashed, then it is restarted at once again', () => {
  const backoff = restartBackoff({ firstMs: 1000, capMs: 30_000, stableMs: 60_000 });
  expect([backoff.next(500), backoff.next(500), backoff.next(500)]).toEqual([0, 1000, 2000]);
  expect(backoff.next(60_000)).toBe(0);
  expect(backoff.next(500)).toBe(1000);
});

it('with the defaults, then a second crash within a minute waits a second and none waits more than 30 s', () => {
  const backoff = restartBackoff();
  expect(backoff.next(10)).toBe(0);
  expect(backoff.next(59_999)).toBe(1000);
  const later = Array.from({ length: 20 }, () => backoff.next(10));
  expect(Math.max(...later)).toBe(30_000);
});
