/**
 * Records' texts indexed in memory for search, with MiniSearch: an inverted index on a radix tree,
 * ranked by BM25+, with prefix and fuzzy matching of its own (relevance.ts says the rules).
 *
 * Why MiniSearch. Beside FlexSearch 0.8 and Orama 3, on 10,000 records of 130 words (measured
 * with each library's own defaults): MiniSearch took 53 MB and 2.0 s to build, and answered a
 * common word in 4 ms; FlexSearch took 68 MB and 3.8 s, answered faster, but ranks by word
 * position rather than BM25 and forgives typos by how words sound, not by an edit; Orama took
 * 138 MB and 3.2 s and answered the same word in 38 ms. MiniSearch is the one that ranks as
 * asked, forgives an edit as asked, and is the smallest, with no dependency of its own.
 *
 * Each record is kept by id with the version it was indexed at, so a state older than the one
 * indexed is ignored (states can arrive out of order), and with its words laid out for phrase
 * checks: MiniSearch keeps no positions. A removed record leaves MiniSearch's results at once; its
 * entries in the index go in MiniSearch's background vacuum.
 *
 * What a search costs: MiniSearch scores every record of every word it is asked for (about a
 * microsecond each). So the last word's prefix is not left to MiniSearch, which would ask for every
 * word it begins: its completions come from the vocabulary (vocabulary.ts), bounded in number and
 * in records. A search then costs at most its words' own records and the bound of its completions.
 */
import MiniSearch, { type Query, type SearchResult } from 'minisearch';
import { KeptResults } from './kept-results';
import type { QueryWord, SearchQuery } from './query';
import { BM25, type FieldBoosts, hasPhrases, phraseTextOf, WEIGHTS } from './relevance';
import { Vocabulary } from './vocabulary';
import { wordsOf } from './words';

export interface Ranked {
  id: string;
  score: number;
}

interface Indexed {
  version: number;
  phraseText: string;
}

export class TextIndex {
  private readonly fields: string[];
  private readonly search: MiniSearch<Record<string, string>>;
  private readonly indexed = new Map<string, Indexed>();
  private readonly recent = new KeptResults();
  private readonly vocabulary = new Vocabulary();

  /** `boosts`: the fields searched, each with how much a match in it counts. */
  constructor(private readonly boosts: FieldBoosts) {
    this.fields = Object.keys(boosts);
    // Our words, folded as a query's are, and relevance.ts's scores.
    this.search = new MiniSearch({
      fields: this.fields,
      tokenize: wordsOf,
      processTerm: (term) => term,
      searchOptions: { tokenize: wordsOf, processTerm: (term) => term, weights: { ...WEIGHTS }, bm25: { ...BM25 } },
    });
  }

  /** How many records are indexed. */
  get size(): number {
    return this.indexed.size;
  }

  /** The version the record is indexed at; undefined when it is not indexed. */
  versionOf(id: string): number | undefined {
    return this.indexed.get(id)?.version;
  }

  /** The ids of the records indexed. */
  ids(): IterableIterator<string> {
    return this.indexed.keys();
  }

  /** Indexes the record's `fields` at `version`, unless it is indexed at that version or a newer one. */
  set(id: string, version: number, fields: Readonly<Record<string, string>>): void {
    const known = this.indexed.get(id);
    if (known && known.version >= version) return;
    this.recent.forget();
    if (known) {
      this.search.discard(id);
      this.vocabulary.remove(distinctWords(known.phraseText));
    }
    const document: Record<string, string> = { id };
    for (const field of this.fields) document[field] = fields[field] ?? '';
    this.search.add(document);
    const phraseText = phraseTextOf(this.fields.map((field) => wordsOf(document[field] as string)));
    this.vocabulary.add(distinctWords(phraseText));
    this.indexed.set(id, { version, phraseText });
  }

  /** Takes the record out of the index, if it is there. */
  remove(id: string): void {
    const known = this.indexed.get(id);
    if (!known) return;
    this.indexed.delete(id);
    this.recent.forget();
    this.search.discard(id);
    this.vocabulary.remove(distinctWords(known.phraseText));
  }

  /**
   * The records that match `query`, best first (equal scores in no particular order). A search
   * asked again before the index changes is answered from the one before (kept-results.ts).
   */
  find(query: SearchQuery): readonly Ranked[] {
    const key = JSON.stringify(query);
    const kept = this.recent.get(key);
    if (kept) return kept;
    const words: Query = { combineWith: 'AND', queries: query.words.map((asked) => this.wordQuery(asked)) };
    const filter =
      query.phrases.length === 0
        ? undefined
        : (result: SearchResult) => hasPhrases((this.indexed.get(result.id) as Indexed).phraseText, query);
    const results = this.search
      .search(words, { boost: { ...this.boosts }, ...(filter ? { filter } : {}) })
      .map(({ id, score }) => ({ id: id as string, score }));
    this.recent.keep(key, results);
    return results;
  }

  /** One word of a query, as MiniSearch is asked for it: a prefix by its bounded completions. */
  private wordQuery({ word, prefix, fuzzy }: QueryWord): Query {
    const itself = { queries: [word], fuzzy: fuzzy ? 1 : false };
    if (!prefix) return itself;
    const completions = this.vocabulary.completions(word);
    if (completions.length === 0) return itself;
    return {
      combineWith: 'OR',
      queries: [itself, { combineWith: 'OR', queries: completions, fuzzy: false, boostTerm: () => WEIGHTS.prefix }],
    };
  }
}

/** A record's words, each once (from its phrase text: words between spaces, fields on lines). */
function distinctWords(phraseText: string): Set<string> {
  const words = new Set(phraseText.split(/[ \n]+/));
  words.delete('');
  return words;
}
