/**
 * A search as people type it, read into what matching needs (matching.ts). Words are folded
 * (words.ts); a quoted phrase must appear as written, word after word, in one field; the last word
 * outside quotes is matched as a prefix, so results come while typing. Nothing of a query ever
 * becomes a regular expression: its words are compared as strings.
 *
 * Bounds: at most LIMITS.searchQueryMax characters and LIMITS.searchWordsMax words (a phrase's
 * words count one each), else 400. A query with no word in it (empty, spaces, punctuation) is no
 * search at all: `readSearch` answers undefined, and the list is answered as without `q`.
 */
import { LIMITS, searchMessages } from '@cs/contract';
import { HttpError } from '@cs/errors';
import { wordsOf } from './words';

/** The last word is matched as a prefix from this many letters: one letter alone would match most words. */
export const PREFIX_MIN = 2;
/** Words this long or longer forgive one typo: a letter added, dropped or changed. */
export const FUZZY_MIN = 5;

export interface QueryWord {
  word: string;
  /** Any word that begins with it matches too (the last word typed, outside quotes). */
  prefix: boolean;
  /** A word one edit away matches too. */
  fuzzy: boolean;
}

export interface SearchQuery {
  /** Every word, once: each must match in some field. */
  words: QueryWord[];
  /** Each phrase's words, in order: each must appear so in one field. */
  phrases: string[][];
}

/** `q` as a query string gave it; undefined when it holds no word (or is not there). */
export function readSearch(raw: unknown): SearchQuery | undefined {
  const text = typeof raw === 'string' ? raw : Array.isArray(raw) ? String(raw[0] ?? '') : '';
  if (text.length > LIMITS.searchQueryMax) throw new HttpError(400, searchMessages.tooLong);
  const phrases: string[][] = [];
  const bare: string[] = [];
  // Even parts are outside quotes, odd ones inside; a quote left open closes at the end.
  for (const [i, part] of text.split('"').entries()) {
    const words = wordsOf(part);
    if (i % 2 === 0) bare.push(...words);
    else if (words.length > 1) phrases.push(words);
    else bare.push(...words);
  }
  const count = bare.length + phrases.reduce((n, phrase) => n + phrase.length, 0);
  if (count === 0) return undefined;
  if (count > LIMITS.searchWordsMax) throw new HttpError(400, searchMessages.tooLong);

  const last = endsOutsideQuotes(text) ? bare.at(-1) : undefined;
  const words = new Map<string, QueryWord>();
  for (const word of [...bare, ...phrases.flat()]) {
    if (!words.has(word)) words.set(word, { word, prefix: false, fuzzy: word.length >= FUZZY_MIN });
  }
  if (last !== undefined && last.length >= PREFIX_MIN) (words.get(last) as QueryWord).prefix = true;
  // A phrase's words are matched as written: the phrase itself is compared word for word.
  for (const word of phrases.flat()) {
    const entry = words.get(word) as QueryWord;
    if (!bare.includes(word)) entry.fuzzy = false;
  }
  return { words: [...words.values()], phrases };
}

/** Whether the text's last word is outside quotes (and so may still be being typed). */
function endsOutsideQuotes(text: string): boolean {
  const quotes = text.split('"').length - 1;
  if (quotes % 2 === 1) return false;
  return !text.trimEnd().endsWith('"');
}
