/** Searches kept until the index changes (kept-results.ts): bounded in searches and in results. */
import { KeptResults } from '../src/kept-results';

const results = (n: number) => Array.from({ length: n }, (_, i) => ({ id: String(i), score: 1 }));

describe('kept searches', () => {
  it('keeps at most 256, the least recently used forgotten first', () => {
    const kept = new KeptResults();
    for (let i = 0; i < 256; i++) kept.keep(`q${i}`, results(1));
    kept.get('q0');
    kept.keep('q256', results(1));

    expect(kept.get('q0')).toBeDefined();
    expect(kept.get('q1')).toBeUndefined();
    expect(kept.get('q256')).toBeDefined();
  });

  it('keeps at most 200,000 results among them, and never a search matching more', () => {
    const kept = new KeptResults();
    kept.keep('huge', results(200_001));
    kept.keep('half', results(100_000));
    kept.keep('other half', results(100_000));
    kept.keep('one more', results(1));

    expect(kept.get('huge')).toBeUndefined();
    expect(kept.get('half')).toBeUndefined();
    expect(kept.get('other half')).toHaveLength(100_000);
    expect(kept.get('one more')).toHaveLength(1);
  });

  it('forgets every search when told the index changed', () => {
    const kept = new KeptResults();
    kept.keep('q', results(3));
    kept.forget();

    expect(kept.get('q')).toBeUndefined();
  });
});
