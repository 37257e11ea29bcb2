/**
 * How long a writer that lost a race (a turn another writer took, a record another writer holds)
 * waits before it reads again, after its `attempt`-th loss: 10 ms doubling up to 200 ms, times a
 * jitter in [0.5, 1.5). The winner's write lands within moments, so the waits stay short; the
 * jitter keeps writers that lost together from colliding again in step.
 */
export function raceBackoffMs(attempt: number): number {
  return Math.min(10 * 2 ** attempt, 200) * (0.5 + Math.random());
}
