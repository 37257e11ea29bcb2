/**
 * Words as search compares them, in the index and in a query alike: case and diacritics folded,
 * split at anything that is neither a letter nor a digit. "Crème Brûlée" and "creme brulee" are
 * the same two words; so are "Straße" and "strasse".
 */

/** A word longer than this is cut: no one types it, and it would only take memory. */
export const WORD_MAX = 64;

/** Letters that no Unicode decomposition takes apart, written as a reader of the language would type them. */
const SPELLED_OUT: Record<string, string> = {
  ß: 'ss',
  æ: 'ae',
  œ: 'oe',
  ø: 'o',
  ł: 'l',
  đ: 'd',
  ð: 'd',
  þ: 'th',
  ı: 'i',
};
const SPELLED_OUT_LETTERS = new RegExp(`[${Object.keys(SPELLED_OUT).join('')}]`, 'g');
const MARKS = /\p{M}+/gu;
const BETWEEN_WORDS = /[^\p{L}\p{N}]+/u;

/** The text lowercased, its diacritics dropped. */
export function fold(text: string): string {
  return text
    .normalize('NFKD')
    .replace(MARKS, '')
    .toLowerCase()
    .replace(SPELLED_OUT_LETTERS, (letter) => SPELLED_OUT[letter] as string);
}

/** The text's words, folded, in order. */
export function wordsOf(text: string): string[] {
  const words: string[] = [];
  for (const word of fold(text).split(BETWEEN_WORDS)) {
    if (word !== '') words.push(word.length > WORD_MAX ? word.slice(0, WORD_MAX) : word);
  }
  return words;
}
