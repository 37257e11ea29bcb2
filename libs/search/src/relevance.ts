/**
 * What makes a record match a query, and how well: one set of rules for the two ways a search runs
 * (text-index.ts, an index kept in memory; scan-ranking.ts, a pass over records read now).
 *
 * A record matches when every word of the query matches a word of one of its fields, and every
 * phrase appears word for word in one field. A query word matches a record's word that is the
 * same; that begins with it, for the last word typed; or that is one edit away (a letter added,
 * dropped or changed), for a word of FUZZY_MIN letters or more. The score is BM25+, per field,
 * the field's boost times the kind of match's weight: an exact word counts most.
 *
 * One difference, for what a search may cost: the index takes a prefix to the most frequent words
 * it begins, within its bounds (vocabulary.ts), while a scan, bounded by the records it reads,
 * takes every word that begins with it.
 */
import type { QueryWord, SearchQuery } from './query';

/** BM25+'s parameters: MiniSearch's defaults, which scan-ranking.ts uses too. */
export const BM25 = { k: 1.2, b: 0.7, d: 0.5 } as const;
/** How much a match counts by its kind, beside an exact one (1): MiniSearch's defaults. */
export const WEIGHTS = { prefix: 0.375, fuzzy: 0.45 } as const;

/** A record's searchable fields by name, and how much a match in each counts. */
export type FieldBoosts = Readonly<Record<string, number>>;

export type MatchKind = 'exact' | 'prefix' | 'fuzzy';

/** How `word` (a record's, folded) matches the query's `asked`, if it does. */
export function matchOf(asked: QueryWord, word: string): MatchKind | undefined {
  if (word === asked.word) return 'exact';
  if (asked.prefix && word.startsWith(asked.word)) return 'prefix';
  if (asked.fuzzy && oneEditApart(asked.word, word)) return 'fuzzy';
  return undefined;
}

/** Whether `b` is `a` with one letter added, dropped or changed. */
function oneEditApart(a: string, b: string): boolean {
  if (Math.abs(a.length - b.length) > 1) return false;
  const [short, long] = a.length <= b.length ? [a, b] : [b, a];
  let i = 0;
  while (i < short.length && short[i] === long[i]) i++;
  if (short.length === long.length) return short.slice(i + 1) === long.slice(i + 1);
  return short.slice(i) === long.slice(i + 1);
}

/**
 * A record's fields' words laid out for phrase checks: each field's words between spaces, fields
 * apart on lines of their own, so that no phrase runs from one field into the next.
 */
export function phraseTextOf(fieldWords: readonly string[][]): string {
  return fieldWords.map((words) => ` ${words.join(' ')} `).join('\n');
}

/** Whether every phrase of the query appears in the record (its `phraseTextOf`). */
export function hasPhrases(phraseText: string, query: SearchQuery): boolean {
  return query.phrases.every((phrase) => phraseText.includes(` ${phrase.join(' ')} `));
}
