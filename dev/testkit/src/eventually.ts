/**
 * Waiting for an effect a test cannot await (a delete that happens after the response, a metric
 * that a scrape brings in): the one polling loop of the tests. It reads until the value is
 * accepted and hands that value back, and otherwise fails naming what it waited for and the last
 * value it read, never a bare timeout and never a quiet `false`.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { inspect } from 'node:util';

export interface EventuallyOptions {
  /** How long to keep reading before failing; 5 s unless given. */
  timeoutMs?: number;
  /** The pause between two reads; 100 ms unless given. */
  everyMs?: number;
}

/**
 * Polls `read` every `everyMs` until `accept` holds for its value (by default: the value is
 * truthy) and returns that value; past `timeoutMs` it throws an Error naming `what` and the last
 * value read. An error thrown by `read` is not retried: it fails the wait at once.
 */
export async function eventually<T>(
  what: string,
  read: () => T | Promise<T>,
  accept: (value: T) => boolean = Boolean,
  { timeoutMs = 5_000, everyMs = 100 }: EventuallyOptions = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (accept(value)) return value;
    if (Date.now() >= deadline) {
      const last = inspect(value, { depth: 3, breakLength: Infinity, maxArrayLength: 20, maxStringLength: 200 });
      throw new Error(`not within ${timeoutMs} ms: ${what} (last read: ${last})`);
    }
    await sleep(everyMs);
  }
}
