/** The first retry waits about this long. */
export const BACKOFF_BASE_MS = 1_000;
/** Waits stop doubling here. */
export const BACKOFF_MAX_MS = 60_000;

/**
 * How long an entry waits after its `failures`-th failed try: doubling from a second, capped at a
 * minute, times a jitter in [0.75, 1.25). The jitter spreads replicas and entries that failed
 * together; its width keeps every wait below the cap longer than any wait before it
 * (0.75 · 2d > 1.25 · d).
 */
export function backoffMs(failures: number, random: () => number = Math.random): number {
  const plain = Math.min(BACKOFF_BASE_MS * 2 ** Math.max(0, failures - 1), BACKOFF_MAX_MS);
  return Math.floor(plain * (0.75 + 0.5 * random()));
}
