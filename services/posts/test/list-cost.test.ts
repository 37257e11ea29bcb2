/**
 * What one list request can cost, whatever page, limit and tag a client asks for: the listing is
 * read whole once and kept (listing.ts), every page is cut from it, and a post's text is looked up
 * once; a change costs a lookup of the changed post alone. Queries are counted as the real
 * database receives them.
 */
import { bearer, eventually } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type PostsHarness, seed, startPosts, uniqueTag } from './helpers';

let h: PostsHarness;
/** Queries on the posts collection since the test began: `find` (the whole listing) and `findOne` (one post). */
const queries: string[] = [];

beforeAll(async () => {
  h = await startPosts(__filename);
  h.db.connection.set('debug', (collection: string, method: string) => {
    if (collection === 'posts') queries.push(method);
  });
});
afterAll(async () => {
  await h.stop();
});

async function seedTag(count: number): Promise<{ tag: string; titles: string[] }> {
  const tag = uniqueTag('cost');
  const posts = Array.from({ length: count }, (_, i) => ({ title: `t${i}`, tags: [tag] }));
  await seed(h.model, posts);
  // Newest first: the seed gives each post a later createdAt than the one before.
  return { tag, titles: posts.map((p) => p.title).reverse() };
}

const list = async (query: Record<string, string | number>) => {
  const res = await h.http.get('/api/posts').query(query);
  expect(res.status).toBe(200);
  return res.body as { posts: { title: string }[]; total: number; page: number; pages: number };
};

describe('the cost of a public list page', () => {
  it('when every page of every limit is asked, then each answer is the contract’s slice, from one read of the listing and one lookup per post', async () => {
    const { tag, titles } = await seedTag(120);
    queries.length = 0;

    for (const limit of [1, 7, 20, 33, 50]) {
      const pages = Math.ceil(120 / limit);
      for (let page = 1; page <= pages + 1; page++) {
        const body = await list({ tag, page, limit });
        expect(body).toMatchObject({ total: 120, page, pages });
        expect(body.posts.map((p) => p.title)).toEqual(titles.slice((page - 1) * limit, page * limit));
      }
    }

    // 230 pages answered from one read of the listing, one of the listed posts' words (for search,
    // listing-search.ts), and one lookup of each post's text.
    expect(queries.filter((q) => q === 'find')).toHaveLength(2);
    expect(queries.filter((q) => q === 'findOne')).toHaveLength(120);
    expect(queries.filter((q) => q !== 'find' && q !== 'findOne')).toEqual([]);
  });

  it('when pages far past the end are asked, then they are answered without a query', async () => {
    const { tag } = await seedTag(3);
    await list({ tag });
    queries.length = 0;

    for (const page of [2, 7, 1000, 999_999_999]) {
      expect(await list({ tag, page, limit: 50 })).toEqual({ posts: [], total: 3, page, pages: 1 });
    }

    expect(queries).toEqual([]);
  });

  it('when a post of the list is unpublished, then the next page asked, whichever, no longer shows it', async () => {
    const { tag, titles } = await seedTag(60);
    expect((await list({ tag, page: 2, limit: 20 })).posts.map((p) => p.title)).toEqual(titles.slice(20, 40));

    const gone = await h.model.findOne({ title: titles[25], tags: tag });
    await h.posts.update(String(gone?._id), String(gone?.authorId), { status: 'draft' });

    const after = await list({ tag, page: 2, limit: 20 });
    expect(after.total).toBe(59);
    expect(after.posts.map((p) => p.title)).toEqual(titles.filter((t) => t !== titles[25]).slice(20, 40));
  });
});

/** The change events of every write so far are out (in the background). */
const changeEventsSent = () =>
  eventually(
    'every change event sent',
    () => h.db.connection.collection('post_events').countDocuments(),
    (waiting) => waiting === 0,
  );

describe('the cost of a change to the list', () => {
  it('when a post on the first page flips 40 times between published and draft, then each list after a flip costs one lookup of that post, never the whole listing', async () => {
    const { tag, titles } = await seedTag(60);
    const first = await h.model.findOne({ title: titles[0], tags: tag });
    const [id, author] = [String(first?._id), String(first?.authorId)];
    await list({ tag, page: 1, limit: 50 });
    await list({ tag, page: 2, limit: 50 });
    queries.length = 0;

    for (let flip = 0; flip < 40; flip++) {
      const status = flip % 2 === 0 ? 'draft' : 'published';
      await h.posts.update(id, author, { status });
      const body = await list({ tag, limit: 50 });
      expect(body.total).toBe(status === 'draft' ? 59 : 60);
      expect(body.posts[0]?.title).toBe(status === 'draft' ? titles[1] : titles[0]);
    }

    await changeEventsSent();
    expect(queries.filter((q) => q === 'find')).toEqual([]);
    // The update's own read and write, and the list's lookup of the changed post, per flip: the
    // change event tells the post as the update wrote it, without a read.
    expect(queries.filter((q) => q === 'findOne')).toHaveLength(2 * 40);
  });

  it('when the post flips through the replica that lists it, then a list after a flip reads no post at all', async () => {
    const { tag, titles } = await seedTag(60);
    const first = await h.model.findOne({ title: titles[0], tags: tag });
    const id = String(first?._id);
    const auth = bearer(String(first?.authorId));
    await list({ tag, page: 1, limit: 50 });
    await list({ tag, page: 2, limit: 50 });
    queries.length = 0;

    for (let flip = 0; flip < 40; flip++) {
      const status = flip % 2 === 0 ? 'draft' : 'published';
      await h.http.put(`/api/posts/${id}`).set(auth).send({ status }).expect(200);
      const body = await list({ tag, limit: 50 });
      expect(body.total).toBe(status === 'draft' ? 59 : 60);
      expect(body.posts[0]?.title).toBe(status === 'draft' ? titles[1] : titles[0]);
    }

    await changeEventsSent();
    expect(queries.filter((q) => q === 'find')).toEqual([]);
    // The update's own read, per flip; the change event tells the post as written, and the list
    // reads nothing of the posts.
    expect(queries.filter((q) => q === 'findOne')).toHaveLength(40);
  });
});
