/**
 * A log whose entries are numbered 1, 2, 3… with no gap, on every MongoDB-protocol server we run,
 * FerretDB included: the posts listing's change log and identity's revocation log are both one.
 *
 * Why the numbers hold where conditional writes are not atomic: an entry is an insert under its
 * number (its `_id`, or a key made from it), and the unique index lets one inserter have each
 * number. A writer tries the number after the newest it knows of, and the next on a duplicate key,
 * so a number is only tried once the one before it exists: a reader that has read up to n and
 * finds no n + 1 has seen every entry written before it looked.
 *
 * Every read is by number, so by key (FerretDB sends only equality filters down; a range or a
 * sort reads the whole collection): n + 1 first, as most reads find nothing new, then `window`
 * numbers at a time while they exist.
 */
import { claimedByInsert } from './unique-key';

/**
 * Inserts an entry (`insert` writes it under the number it is given) at the first free number
 * from `firstTry` on; answers that number. Queue a process's appends: two of one process would
 * race each other for every number. `skipTo`, when given, is asked once, after the first number
 * found taken, for a number known to exist (a hint of the head): the tries go on after it, so a
 * writer whose `firstTry` is long behind does not try its way through every entry since.
 */
export async function appendNumbered(
  firstTry: number,
  insert: (seq: number) => Promise<unknown>,
  skipTo?: () => Promise<number>,
): Promise<number> {
  let ask = skipTo;
  for (let seq = firstTry; ; seq++) {
    if (await claimedByInsert(() => insert(seq))) return seq;
    if (ask) {
      // The next number tried is one after an entry that exists: still no gap.
      seq = Math.max(seq, await ask());
      ask = undefined;
    }
  }
}

/**
 * The entries after `seq` that exist now, in order (the first has number seq + 1), read until one
 * is missing or at least `atLeast` are found. `entry` finds one entry by its number.
 */
export async function readNumbered<T>(
  seq: number,
  entry: (seq: number) => Promise<T | null>,
  { window, atLeast = Number.POSITIVE_INFINITY }: { window: number; atLeast?: number },
): Promise<T[]> {
  const found: T[] = [];
  for (let width = 1; found.length < atLeast; width = window) {
    const next = seq + found.length;
    const read = await Promise.all(Array.from({ length: width }, (_, i) => entry(next + 1 + i)));
    const missing = read.findIndex((doc) => !doc);
    found.push(...(read.slice(0, missing < 0 ? width : missing) as T[]));
    if (missing >= 0) break;
  }
  return found;
}
