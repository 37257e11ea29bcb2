/**
 * The words of the listed posts (listing-search.ts) across a whole read of the listing. The
 * listing does not wait for them; a search does, for every follow begun before it, so it never
 * runs on words that are partly read. A follow from nothing fills a new index and swaps it in when
 * whole, and a post's state the listing applies meanwhile reaches the new index too.
 */
import { readSearch, type SearchQuery } from '@cs/search';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ListingIndex, PLACED_FIELDS, type PlacedRecord } from '../src/listing-index';
import { createListingSearch } from '../src/listing-search';
import type { PostRecord } from '../src/model';
import { type PostsHarness, seed, startPosts } from './helpers';

let h: PostsHarness;

beforeAll(async () => {
  h = await startPosts(__filename);
});
afterAll(async () => {
  await h.stop();
});

const query = (q: string) => readSearch(q) as SearchQuery;
const listed = () => h.model.find({ status: 'published' }, PLACED_FIELDS).lean<PlacedRecord[]>();

describe('the words of the listed posts', () => {
  it('when the listing is read whole from nothing, then a search asked meanwhile waits for the new words, and a state applied meanwhile reaches them', async () => {
    const [id, other] = await seed(h.model, [
      { title: 'Reykjavik harbour', body: 'Boats in the old harbour.' },
      { title: 'Vik beach', body: 'Black sand.' },
    ]);
    const words = createListingSearch(h.model);
    await words.follow(await listed(), undefined, true);
    expect((await words.find(query('reykjavik'))).map((r) => r.id)).toEqual([id]);

    await h.model.updateOne({ _id: id }, { $set: { title: 'Akureyri harbour', version: 1 } });
    const following = words.follow(await listed(), undefined, true);
    const asked = words.find(query('akureyri'));
    // The listing applies a change while the new words are read: both indexes get it.
    words.apply(other as string, {
      ...((await h.model.findById(other).lean<PostRecord>()) as PostRecord),
      title: 'Husavik whales',
      version: 5,
    });
    await following;

    expect((await asked).map((r) => r.id)).toEqual([id]);
    expect(await words.find(query('reykjavik'))).toEqual([]);
    expect((await words.find(query('husavik'))).map((r) => r.id)).toEqual([other]);
  });

  it('when a post is no longer published, then a whole read that does not list it takes it out, unless the listing it replaces still lists it', async () => {
    const [id] = await seed(h.model, [{ title: 'Tromso lights', body: 'Green over the fjord.' }]);
    const words = createListingSearch(h.model);
    await words.follow(await listed(), undefined, false);
    expect((await words.find(query('tromso'))).map((r) => r.id)).toEqual([id]);

    const stillListing = new ListingIndex(await h.model.find({ _id: id }, PLACED_FIELDS).lean<PlacedRecord[]>());
    await words.follow([], stillListing, false);
    expect((await words.find(query('tromso'))).map((r) => r.id)).toEqual([id]);

    await words.follow([], undefined, false);
    expect(await words.find(query('tromso'))).toEqual([]);
  });
});
