/**
 * The results of recent searches of one index, kept until the index changes: a search asked again
 * (people look for the same few things, and a page and the next are the same search) costs a
 * lookup, not a pass over its words' postings. Any change to the index forgets them all: which
 * kept searches a changed record would enter or leave is not known without running them again.
 *
 * Bounded twice: at most KEPT_MAX searches, and at most KEPT_IDS_MAX results among them (a search
 * matching most records holds that many), the least recently used forgotten first.
 */
import type { Ranked } from './text-index';

const KEPT_MAX = 256;
const KEPT_IDS_MAX = 200_000;

export class KeptResults {
  /** By the search's key, most recently used last (a Map keeps insertion order). */
  private readonly kept = new Map<string, readonly Ranked[]>();
  private ids = 0;

  get(key: string): readonly Ranked[] | undefined {
    const results = this.kept.get(key);
    if (results) {
      this.kept.delete(key);
      this.kept.set(key, results);
    }
    return results;
  }

  keep(key: string, results: readonly Ranked[]): void {
    if (results.length > KEPT_IDS_MAX) return;
    this.kept.set(key, results);
    this.ids += results.length;
    for (const [oldest, dropped] of this.kept) {
      if (this.kept.size <= KEPT_MAX && this.ids <= KEPT_IDS_MAX) break;
      this.kept.delete(oldest);
      this.ids -= dropped.length;
    }
  }

  /** The index changed: every kept search may now answer otherwise. */
  forget(): void {
    this.kept.clear();
    this.ids = 0;
  }
}
