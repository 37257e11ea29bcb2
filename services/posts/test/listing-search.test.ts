/**
 * The words of the listed posts (listing-search.ts) across a whole read of the listing: a read
 * that must start from nothing (anything may have changed around the service) makes a new index
 * and swaps it in when whole, so the searches answered meanwhile still find every listed post.
 */
import { readSearch, type SearchQuery } from '@cs/search';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ListingIndex, PLACED_FIELDS, type PlacedRecord } from '../src/listing-index';
import { createListingSearch } from '../src/listing-search';
import { type PostsHarness, seed, startPosts } from './helpers';

let h: PostsHarness;

beforeAll(async () => {
  h = await startPosts(__filename);
});
afterAll(async () => {
  await h.stop();
});

const query = (q: string) => readSearch(q) as SearchQuery;

describe('the words of the listed posts', () => {
  it('when the listing is read whole from nothing, then searches answered while it is read still find the listed posts, and the new words once it is done', async () => {
    const [id] = await seed(h.model, [{ title: 'Reykjavik harbour', body: 'Boats in the old harbour.' }]);
    const words = createListingSearch(h.model);
    const read = () => h.model.find({ status: 'published' }, PLACED_FIELDS).lean<PlacedRecord[]>();
    await words.follow(await read(), undefined, true);
    expect(words.find(query('reykjavik')).map((r) => r.id)).toEqual([id]);

    await h.model.updateOne({ _id: id }, { $set: { title: 'Akureyri harbour', version: 1 } });
    const following = words.follow(await read(), undefined, true);
    // While the new index is being filled, the one it replaces answers.
    expect(words.find(query('reykjavik')).map((r) => r.id)).toEqual([id]);
    await following;

    expect(words.find(query('reykjavik'))).toEqual([]);
    expect(words.find(query('akureyri')).map((r) => r.id)).toEqual([id]);
  });

  it('when a post is no longer published, then a whole read that does not list it takes it out, unless the listing it replaces still lists it', async () => {
    const [id] = await seed(h.model, [{ title: 'Tromso lights', body: 'Green over the fjord.' }]);
    const words = createListingSearch(h.model);
    await words.follow(
      await h.model.find({ status: 'published' }, PLACED_FIELDS).lean<PlacedRecord[]>(),
      undefined,
      false,
    );
    expect(words.find(query('tromso')).map((r) => r.id)).toEqual([id]);

    const stillListing = new ListingIndex(await h.model.find({ _id: id }, PLACED_FIELDS).lean<PlacedRecord[]>());
    await words.follow([], stillListing, false);
    expect(words.find(query('tromso')).map((r) => r.id)).toEqual([id]);

    await words.follow([], undefined, false);
    expect(words.find(query('tromso'))).toEqual([]);
  });
});
