/**
 * A search without an index: the records read now, one at a time, matched and ranked by the rules
 * of relevance.ts. For a set that is bounded and private (one account's notes, or posts drafts
 * included), where keeping an index on every replica would cost more than reading the set.
 *
 * Memory: a record that does not match is forgotten once offered; one that does keeps only its
 * matched words' counts. Work: every word of every record offered, compared with the query's words.
 */
import type { SearchQuery } from './query';
import { BM25, type FieldBoosts, hasPhrases, type MatchKind, matchOf, phraseTextOf, WEIGHTS } from './relevance';
import type { Ranked } from './text-index';
import { wordsOf } from './words';

export interface ScanRanking {
  /** The next record; records offered earlier come first among equal scores (offer newest first). */
  offer(id: string, fields: Readonly<Record<string, string>>): void;
  /** The records that matched, best first. */
  ranked(): Ranked[];
}

/** One record's word that matched: in which field, how, and how often. */
interface Hit {
  field: number;
  word: string;
  kind: MatchKind;
  count: number;
}

interface Matched {
  id: string;
  hits: Hit[];
  lengths: number[];
}

export function createScanRanking(query: SearchQuery, boosts: FieldBoosts): ScanRanking {
  const fields = Object.keys(boosts);
  const matched: Matched[] = [];
  /** Records offered, and their words in each field: what BM25's averages are of. */
  let records = 0;
  const totalLengths = fields.map(() => 0);
  /** In how many records each matching word appears, per field (`<field> <word>`). */
  const frequency = new Map<string, number>();

  function offer(id: string, values: Readonly<Record<string, string>>): void {
    records += 1;
    const fieldWords = fields.map((field) => wordsOf(values[field] ?? ''));
    const hits: Hit[] = [];
    const found = new Set<number>();
    for (const [f, words] of fieldWords.entries()) {
      totalLengths[f] = (totalLengths[f] as number) + words.length;
      const counts = new Map<string, Hit>();
      const misses = new Set<string>();
      for (const word of words) {
        const known = counts.get(word);
        if (known) {
          known.count += 1;
          continue;
        }
        if (misses.has(word)) continue;
        for (const [q, asked] of query.words.entries()) {
          const kind = matchOf(asked, word);
          if (kind === undefined) continue;
          found.add(q);
          const previous = counts.get(word);
          if (!previous || WEIGHTS_OF[kind] > WEIGHTS_OF[previous.kind])
            counts.set(word, { field: f, word, kind, count: 1 });
        }
        if (!counts.has(word)) misses.add(word);
      }
      for (const hit of counts.values()) {
        hits.push(hit);
        const key = `${f} ${hit.word}`;
        frequency.set(key, (frequency.get(key) ?? 0) + 1);
      }
    }
    if (found.size < query.words.length) return;
    if (query.phrases.length > 0 && !hasPhrases(phraseTextOf(fieldWords), query)) return;
    matched.push({ id, hits, lengths: fieldWords.map((words) => words.length) });
  }

  function scoreOf({ hits, lengths }: Matched): number {
    let score = 0;
    for (const { field, word, kind, count } of hits) {
      const average = (totalLengths[field] as number) / records || 1;
      const length = lengths[field] as number;
      const df = frequency.get(`${field} ${word}`) as number;
      const idf = Math.log(1 + (records - df + 0.5) / (df + 0.5));
      const tf = (count * (BM25.k + 1)) / (count + BM25.k * (1 - BM25.b + (BM25.b * length) / average));
      score += (boosts[fields[field] as string] as number) * WEIGHTS_OF[kind] * idf * (BM25.d + tf);
    }
    return score;
  }

  return {
    offer,
    ranked() {
      const scored = matched.map((record, order) => ({ id: record.id, score: scoreOf(record), order }));
      scored.sort((a, b) => b.score - a.score || a.order - b.order);
      return scored.map(({ id, score }) => ({ id, score }));
    },
  };
}

const WEIGHTS_OF: Record<MatchKind, number> = { exact: 1, ...WEIGHTS };
