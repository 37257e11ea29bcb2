/**
 * "Retry while the upstream comes back", written once for every caller of another service (the
 * gateway's forwarding, notes' files client). A call that never reached the upstream (see
 * `notDelivered` in @cs/errors: it is restarting or being replaced) is sent again after a backoff
 * of 50, 100, 200, then 400 ms, as long as the call's first attempt began less than `windowMs`
 * ago. The window is kept per upstream too: once an upstream has been unreachable for longer than
 * `windowMs`, it is down, and calls to it fail at once instead of each waiting out a window, until
 * one reaches it again (`reached`).
 */
export interface RetryWindow {
  /**
   * The pause before sending again a call that was not delivered on its `attempt`-th try (from 1)
   * and whose first try began at `startedAt` (ms since the epoch); undefined: give up now.
   */
  nextDelay(attempt: number, startedAt: number): number | undefined;
  /** A call reached the upstream: it is back, and the next failure starts a new window. */
  reached(): void;
}

const FIRST_DELAY_MS = 50;
const MAX_DELAY_MS = 400;

export function createRetryWindow(windowMs: number): RetryWindow {
  /** Since when no call has reached the upstream; unset once one does. */
  let unreachableSince: number | undefined;
  return {
    nextDelay(attempt, startedAt) {
      const now = Date.now();
      unreachableSince ??= now;
      if (now - unreachableSince > windowMs) return undefined;
      const delay = Math.min(FIRST_DELAY_MS * 2 ** (attempt - 1), MAX_DELAY_MS);
      return now + delay - startedAt <= windowMs ? delay : undefined;
    },
    reached() {
      unreachableSince = undefined;
    },
  };
}

/**
 * Runs `send` until it succeeds, or fails with an error that `retryable` refuses, or the window
 * gives up: then the last error is thrown.
 */
export async function retryWithin<T>(
  window: RetryWindow,
  retryable: (err: unknown) => boolean,
  send: () => Promise<T>,
): Promise<T> {
  const startedAt = Date.now();
  for (let attempt = 1; ; attempt++) {
    try {
      const result = await send();
      window.reached();
      return result;
    } catch (err) {
      const delay = retryable(err) ? window.nextDelay(attempt, startedAt) : undefined;
      if (delay === undefined) throw err;
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}
