/**
 * The words of an index (text-index.ts), each with the number of records it is in, kept in order
 * so that the words beginning with a prefix are found by two binary searches. It bounds what a
 * prefix may cost: the words typed so far ("ka") may begin thousands of words, which together are
 * in nearly every record, and a search pays for every record of every word it asks for.
 *
 * `completions` gives at most COMPLETIONS_MAX words, the most frequent first, whose records add up
 * to at most COMPLETION_POSTINGS_MAX: a prefix that begins more words than that matches the most
 * frequent that fit, as Elasticsearch's `max_expansions` does (its default, 50).
 */

export const COMPLETIONS_MAX = 50;
export const COMPLETION_POSTINGS_MAX = 20_000;

export class Vocabulary {
  /** Records each word is in. */
  private readonly counts = new Map<string, number>();
  /** Every word, in code-unit order. */
  private readonly sorted: string[] = [];

  /** A record's distinct words came in. */
  add(words: Iterable<string>): void {
    for (const word of words) {
      const count = this.counts.get(word);
      if (count === undefined) this.sorted.splice(this.positionOf(word), 0, word);
      this.counts.set(word, (count ?? 0) + 1);
    }
  }

  /** A record's distinct words went. */
  remove(words: Iterable<string>): void {
    for (const word of words) {
      const count = this.counts.get(word);
      if (count === undefined) continue;
      if (count > 1) {
        this.counts.set(word, count - 1);
        continue;
      }
      this.counts.delete(word);
      this.sorted.splice(this.positionOf(word), 1);
    }
  }

  /** The words longer than `prefix` that begin with it: the most frequent first, within the bounds above. */
  completions(prefix: string): string[] {
    const candidates: { word: string; count: number }[] = [];
    for (let at = this.positionOf(prefix); at < this.sorted.length; at++) {
      const word = this.sorted[at] as string;
      if (!word.startsWith(prefix)) break;
      if (word !== prefix) candidates.push({ word, count: this.counts.get(word) as number });
    }
    candidates.sort((a, b) => b.count - a.count || (a.word < b.word ? -1 : 1));
    const chosen: string[] = [];
    let postings = 0;
    for (const { word, count } of candidates) {
      if (chosen.length === COMPLETIONS_MAX) break;
      if (postings + count > COMPLETION_POSTINGS_MAX) continue;
      chosen.push(word);
      postings += count;
    }
    return chosen;
  }

  /** Where `word` is, or would go, in `sorted`. */
  private positionOf(word: string): number {
    let low = 0;
    let high = this.sorted.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if ((this.sorted[middle] as string) < word) low = middle + 1;
      else high = middle;
    }
    return low;
  }
}
