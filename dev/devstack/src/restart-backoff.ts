/**
 * How long the supervisor of `npm start` (supervisor.ts) waits before it starts the one process
 * again after a crash. The first crash is restarted at once: a process that ran out of memory or
 * was killed is back as soon as it can be. A crash soon after a start is a crash loop (a setting
 * it refuses, a database gone, an attack that kills it as fast as it comes back): each one then
 * waits twice as long as the last, up to a cap, so that the loop neither spins two cores nor
 * floods the log. A process that stayed up a while is forgiven: its next crash is again restarted
 * at once.
 */
export interface RestartBackoffOptions {
  /** The wait after the second crash in a row (the first is restarted at once). Default 1 s. */
  firstMs?: number;
  /** The longest wait. Default 30 s. */
  capMs?: number;
  /** How long a process must have run for its crash to start a new series. Default 60 s. */
  stableMs?: number;
}

export interface RestartBackoff {
  /** The wait before the next start, for a process that crashed after running `uptimeMs`. */
  next(uptimeMs: number): number;
}

export function restartBackoff({
  firstMs = 1000,
  capMs = 30_000,
  stableMs = 60_000,
}: RestartBackoffOptions = {}): RestartBackoff {
  /** Crashes in a row, each soon after the start before it. */
  let inARow = 0;
  return {
    next(uptimeMs) {
      if (uptimeMs >= stableMs) inARow = 0;
      const wait = inARow === 0 ? 0 : Math.min(capMs, firstMs * 2 ** (inARow - 1));
      inARow += 1;
      return wait;
    },
  };
}
