/** The index's vocabulary (vocabulary.ts): what a prefix may expand to, and what it costs. */
import { readSearch, type SearchQuery, TextIndex } from '../src';
import { COMPLETION_POSTINGS_MAX, COMPLETIONS_MAX, Vocabulary } from '../src/vocabulary';

describe('the completions of a prefix', () => {
  it('are the words that begin with it, the most frequent first, and follow the records in and out', () => {
    const words = new Vocabulary();
    words.add(['cat', 'catalog', 'category']);
    words.add(['category', 'dog']);
    words.add(['category', 'catalog']);

    expect(words.completions('cat')).toEqual(['category', 'catalog']);
    words.remove(['category', 'catalog']);
    words.remove(['category', 'dog']);
    expect(words.completions('cat')).toEqual(['catalog', 'category']);
    words.remove(['cat', 'catalog', 'category']);
    expect(words.completions('cat')).toEqual([]);
  });

  it(`are at most ${COMPLETIONS_MAX}, in at most ${COMPLETION_POSTINGS_MAX} records together`, () => {
    const words = new Vocabulary();
    for (let i = 0; i < 80; i++) words.add([`ka${i}`]);
    expect(words.completions('ka')).toHaveLength(COMPLETIONS_MAX);

    const common = new Vocabulary();
    for (let r = 0; r < COMPLETION_POSTINGS_MAX; r++) common.add(['kabul', ...(r < 10 ? ['kafka'] : [])]);
    common.add(['kale']);
    // "kabul" alone is in as many records as the bound: it fits, and nothing else does but what is left.
    expect(common.completions('ka')).toEqual(['kabul']);
    common.add(['kabul']);
    expect(common.completions('ka')).toEqual(['kafka', 'kale']);
  });

  it('bound what a search of a prefix matches in the index: the most frequent words it begins', () => {
    const index = new TextIndex({ title: 1 });
    for (let i = 0; i < 60; i++) index.set(`rare${i}`, 0, { title: `ka${i}x` });
    for (let i = 0; i < 3; i++) index.set(`common${i}`, 0, { title: 'kaboom' });
    const found = index.find(readSearch('ka') as SearchQuery).map((r) => r.id);

    // "kaboom" and the 49 most frequent of the others (equally rare: the first in order).
    expect(found).toHaveLength(3 + COMPLETIONS_MAX - 1);
    expect(found).toEqual(expect.arrayContaining(['common0', 'common1', 'common2']));
  });
});
