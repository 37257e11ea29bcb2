/**
 * The sweeper's pace: a pass keeps going while work is due (each step reads its next batch until
 * none is left), and the work of a batch runs a bounded number at a time, so that the sweeper keeps
 * up with any backlog that clients can make without taking every connection to the database or to
 * storage.
 */

/** Records or objects a sweeper step works on at once. */
export const SWEEP_CONCURRENCY = 8;

/**
 * Runs `work` on every item, at most `concurrency` at once. The first failure stops taking new
 * items, and is thrown once the ones already running have settled.
 */
export async function eachAtMost<T>(
  items: readonly T[],
  work: (item: T) => Promise<void>,
  concurrency = SWEEP_CONCURRENCY,
): Promise<void> {
  let next = 0;
  let failure: { err: unknown } | undefined;
  const worker = async () => {
    while (!failure && next < items.length) {
      const item = items[next++] as T;
      try {
        await work(item);
      } catch (err) {
        failure ??= { err };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  if (failure) throw failure.err;
}
