/**
 * The search benchmark's posts: the same texts on both systems, made from a seed, so every run
 * searches the same words. Words follow a skewed frequency, as a language's do, over 20,000
 * made-up words of 2 to 4 syllables; two real words are planted at known rates, and the queries
 * look for them: "harbor" in a tenth of the titles, "lantern" in a hundredth of the bodies (all of
 * them posts whose title has "harbor").
 */

export interface CorpusPost {
  title: string;
  body: string;
  tags: string[];
}

const SYLLABLES = ['ka', 'lo', 'mi', 'ne', 'ru', 'sa', 'te', 'vo', 'zi', 'pa', 'qu', 'ex', 'or', 'el', 'is', 'um'];
const VOCABULARY_SIZE = 20_000;
const BODY_WORDS = 80;
const TITLE_WORDS = 6;

/** The searches measured, each as a client sends it to us, and as PocketBase's `~` filter says it. */
export const SEARCHES = [
  { name: 'one word, in 1% of posts', q: 'lantern', words: ['lantern'] },
  { name: 'two words, the last being typed', q: 'harbor lant', words: ['harbor', 'lant'] },
] as const;

/** A generator of numbers in [0, 1), the same from the same seed (a linear congruential one). */
function numbers(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    return state / 2_147_483_648;
  };
}

const vocabulary = (() => {
  const next = numbers(42);
  return Array.from({ length: VOCABULARY_SIZE }, () => {
    let word = '';
    for (let s = 2 + Math.floor(next() * 3); s > 0; s--) word += SYLLABLES[Math.floor(next() * SYLLABLES.length)];
    return word;
  });
})();

/** Post number `i`, the same on every run. */
export function corpusPost(i: number): CorpusPost {
  const next = numbers(i + 1);
  const word = () => vocabulary[Math.floor(next() ** 2.5 * VOCABULARY_SIZE)] as string;
  const words = (n: number) => Array.from({ length: n }, word);
  const title = words(TITLE_WORDS);
  const body = words(BODY_WORDS);
  if (i % 10 === 3) title[2] = 'harbor';
  if (i % 100 === 13) body[40] = 'lantern';
  const capitalized = title.join(' ');
  return {
    title: `${capitalized[0]?.toUpperCase()}${capitalized.slice(1)}`,
    body: `${body.join(' ')}.`,
    tags: [word().slice(0, 40), i % 10 === 0 ? 'listed' : 'other'],
  };
}
