/**
 * What the words of the public list take in a posts process, and what a search costs there
 * without the network: `@cs/search`'s TextIndex (what listing-search.ts keeps) built in this
 * process from the benchmark's posts, its heap measured after a full collection, and each search
 * timed alone, run each time (the index changes before it, so no search is answered from a kept one). Among the searches, the widest one the bounds allow: a two-letter prefix, which
 * matches a large share of the words.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { readSearch, TextIndex } from '@cs/search';
import { median, round } from '../stats';
import { corpusPost, SEARCHES } from './corpus';

/** The posts service's fields and boosts (services/posts/src/search-fields.ts). */
const BOOSTS = { title: 2, tags: 1.5, body: 1 };
const TIMED = 50;
/** A record changed before each timed search, to a version never used before. */
const CHANGED = 'f'.repeat(24);
let changes = 0;

export interface IndexFigures {
  posts: number;
  heapMb: number;
  mbPer10k: number;
  buildMs: number;
  /** Each search's median time, alone, in ms, and how many posts it matched. */
  searches: { name: string; q: string; matched: number; p50Ms: number }[];
}

function collect(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

export function measureIndex(posts: number): IndexFigures {
  collect();
  const before = process.memoryUsage().heapUsed;
  const started = performance.now();
  const index = new TextIndex(BOOSTS);
  for (let i = 0; i < posts; i++) {
    const { title, body, tags } = corpusPost(i);
    index.set(i.toString(16).padStart(24, '0'), 0, { title, body, tags: tags.join(' ') });
  }
  const buildMs = performance.now() - started;
  collect();
  const heapMb = (process.memoryUsage().heapUsed - before) / 1e6;
  const widest = { name: 'a two-letter prefix (the widest the bounds allow)', q: 'ka' };
  const searches = [...SEARCHES, widest].map(({ name, q }) => {
    const query = readSearch(q);
    if (!query) throw new Error(`"${q}" is no search`);
    const times: number[] = [];
    let matched = 0;
    for (let t = 0; t < TIMED; t++) {
      // A change to the index, untimed: the search is run, not answered from the one before.
      changes += 1;
      index.set(CHANGED, changes, { title: `change ${changes}`, body: '', tags: '' });
      const t0 = performance.now();
      matched = index.find(query).length;
      times.push(performance.now() - t0);
    }
    return { name, q, matched, p50Ms: round(median(times), 2) };
  });
  return {
    posts,
    heapMb: round(heapMb, 1),
    mbPer10k: round((heapMb * 10_000) / posts, 1),
    buildMs: round(buildMs),
    searches,
  };
}
