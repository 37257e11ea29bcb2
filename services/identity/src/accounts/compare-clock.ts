/**
 * How long a bcrypt compare takes here, so that a login for an e-mail that has no account answers
 * in the time a wrong password takes, without the compare itself. A crowd of logins for made-up
 * addresses (a botnet, each address within its limits) would otherwise spend on dummy compares
 * the CPU that the people who log in need: their logins then wait on the cores, not only in the
 * queue (the bcrypt bulkhead). The wait is as long as the median of the latest real compares,
 * so it follows the machine's load as they do; before any, it measures one against `sample`.
 * The wait still takes its place in the bulkhead, as a compare would: the queue looks the same.
 */
import { setTimeout as sleep } from 'node:timers/promises';

/** The latest real compares the median is taken over: few, so that it follows a change of load soon. */
const KEPT = 9;

export interface CompareClock {
  /** Runs a real compare, and keeps how long it took. */
  timed<T>(compare: () => Promise<T>): Promise<T>;
  /** Waits as long as a compare takes. */
  wait(): Promise<void>;
}

export function createCompareClock(sample: () => Promise<unknown>): CompareClock {
  const durations: number[] = [];

  const timed = async <T>(compare: () => Promise<T>): Promise<T> => {
    const started = performance.now();
    try {
      return await compare();
    } finally {
      durations.push(performance.now() - started);
      if (durations.length > KEPT) durations.shift();
    }
  };

  return {
    timed,
    async wait() {
      if (durations.length === 0) {
        await timed(sample);
        return;
      }
      const sorted = [...durations].sort((a, b) => a - b);
      await sleep(sorted[Math.floor(sorted.length / 2)]);
    },
  };
}
