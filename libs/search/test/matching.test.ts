/**
 * Matching as people expect it, held to both ways a search runs: the index kept in memory
 * (TextIndex) and the pass over records read now (createScanRanking) must find the same records.
 */
import { LIMITS, searchMessages } from '@cs/contract';
import { createScanRanking, readSearch, type SearchQuery, TextIndex } from '../src';

const BOOSTS = { title: 2, body: 1 };

const RECORDS: Record<string, { title: string; body: string }> = {
  creme: { title: 'Crème Brûlée at home', body: 'A custard under burnt sugar.' },
  strasse: { title: 'Hauptstraße', body: 'The main street of a German town.' },
  search: { title: 'Searching while typing', body: 'Results come as you type each letter.' },
  typo: { title: 'Receive and believe', body: 'Spelling rules that nobody remembers.' },
  phrase: { title: 'Quick brown fox', body: 'The quick brown fox jumps over the lazy dog.' },
  shuffled: { title: 'Brown and quick', body: 'A fox that is brown, a dog that is quick.' },
  short: { title: 'Cats', body: 'A cat sat on a mat, as cats do.' },
};

function query(q: string): SearchQuery {
  const read = readSearch(q);
  if (!read) throw new Error(`"${q}" holds no word`);
  return read;
}

/** The ids found by each way of searching, which must agree. */
function found(q: string): string[] {
  const index = new TextIndex(BOOSTS);
  for (const [id, fields] of Object.entries(RECORDS)) index.set(id, 1, fields);
  const scan = createScanRanking(query(q), BOOSTS);
  for (const [id, fields] of Object.entries(RECORDS)) scan.offer(id, fields);
  const indexed = index.find(query(q)).map((r) => r.id);
  const scanned = scan.ranked().map((r) => r.id);
  expect(new Set(scanned)).toEqual(new Set(indexed));
  return indexed.sort();
}

describe('matching', () => {
  it('folds case and diacritics, on both sides', () => {
    expect(found('creme brulee')).toEqual(['creme']);
    expect(found('CRÈME')).toEqual(['creme']);
    expect(found('hauptstrasse')).toEqual(['strasse']);
    expect(found('Hauptstraße')).toEqual(['strasse']);
  });

  it('matches the last word as a prefix, from two letters', () => {
    expect(found('searc')).toEqual(['search']);
    expect(found('results come as you ty')).toEqual(['search']);
    // An earlier word is whole: "searc" is no word of any record.
    expect(found('searc typing')).toEqual([]);
    // One letter alone matches only itself.
    expect(found('t')).toEqual([]);
  });

  it('forgives one typo in a word of five letters or more, and not two', () => {
    expect(found('recieve')).toEqual([]); // a swap is two edits
    expect(found('receve')).toEqual(['typo']); // a letter dropped
    expect(found('beleive')).toEqual([]);
    expect(found('spellling')).toEqual(['typo']); // a letter added
    expect(found('remembars')).toEqual(['typo']); // a letter changed
    expect(found('remambars')).toEqual([]);
    // Four letters: no typo forgiven (the last word, "cots", is also no prefix of "cats").
    expect(found('cots')).toEqual([]);
  });

  it('finds a quoted phrase only as written, word after word, in one field', () => {
    expect(found('"quick brown fox"')).toEqual(['phrase']);
    expect(found('quick brown fox').sort()).toEqual(['phrase', 'shuffled']);
    expect(found('"brown quick"')).toEqual([]);
    // Not across fields: "fox" ends the title, "the" begins the body.
    expect(found('"fox the"')).toEqual([]);
  });

  it('needs every word', () => {
    expect(found('fox cat')).toEqual([]);
    expect(found('cat mat')).toEqual(['short']);
  });

  it('ranks a match in the title, and an exact word, above the others', () => {
    const index = new TextIndex(BOOSTS);
    index.set('in-body', 1, { title: 'Notes', body: 'about a garden in spring' });
    index.set('in-title', 1, { title: 'Garden', body: 'notes about spring' });
    index.set('prefix', 1, { title: 'Gardening', body: 'notes in spring' });
    expect(index.find(query('garden')).map((r) => r.id)).toEqual(['in-title', 'in-body', 'prefix']);
  });
});

describe('the index', () => {
  it('keeps the newest version of a record, whatever order the states arrive in', () => {
    const index = new TextIndex(BOOSTS);
    index.set('a', 2, { title: 'second', body: '' });
    index.set('a', 1, { title: 'first', body: '' });
    expect(index.find(query('first'))).toEqual([]);
    expect(index.find(query('second')).map((r) => r.id)).toEqual(['a']);
    index.set('a', 3, { title: 'third', body: '' });
    expect(index.find(query('second'))).toEqual([]);
    index.remove('a');
    expect(index.find(query('third'))).toEqual([]);
    expect(index.size).toBe(0);
  });
});

describe('a query', () => {
  it('with no word in it is no search', () => {
    expect(readSearch('')).toBeUndefined();
    expect(readSearch('   ')).toBeUndefined();
    expect(readSearch('!?')).toBeUndefined();
    expect(readSearch(undefined)).toBeUndefined();
  });

  it(`has at most ${LIMITS.searchQueryMax} characters and ${LIMITS.searchWordsMax} words, a phrase's words counted`, () => {
    expect(readSearch('a'.repeat(LIMITS.searchQueryMax))).toBeDefined();
    expect(() => readSearch('a'.repeat(LIMITS.searchQueryMax + 1))).toThrow(searchMessages.tooLong);
    const ten = Array.from({ length: LIMITS.searchWordsMax }, (_, i) => `w${i}`);
    expect(readSearch(ten.join(' '))?.words).toHaveLength(LIMITS.searchWordsMax);
    expect(() => readSearch([...ten, 'more'].join(' '))).toThrow(searchMessages.tooLong);
    expect(() => readSearch(`"${ten.slice(0, 6).join(' ')}" ${ten.slice(6).join(' ')} more`)).toThrow(
      searchMessages.tooLong,
    );
  });

  it('is read as words, never as a pattern', () => {
    expect(readSearch('.*')).toBeUndefined();
    expect(readSearch('(a+)+$ [x] \\d')?.words.map((w) => w.word)).toEqual(['a', 'x', 'd']);
  });
});
