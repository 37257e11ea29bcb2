import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { markListingChanged } from '../src/listing';
import { type PostsHarness, seed, startPosts, uniqueTag } from './helpers';

let h: PostsHarness;
let tag: string;
/** 25 published posts with one tag, seeded one minute apart (index 24 is newest), plus drafts. */
let ids: string[];

beforeAll(async () => {
  h = await startPosts(__filename);
  tag = uniqueTag('page');
  ids = await seed(
    h.model,
    Array.from({ length: 25 }, (_, i) => ({ title: `Paged ${i}`, tags: [tag, 'shared'] })),
  );
  await seed(h.model, [
    { title: 'A draft with the tag', status: 'draft', tags: [tag] },
    { title: 'Another draft', status: 'draft', tags: [tag] },
  ]);
});
afterAll(async () => {
  await h.stop();
});

const newestFirst = () => [...ids].reverse();

describe('GET /api/posts', () => {
  it('when no parameters are given, then page 1 of 20 published posts, newest first, with total and pages', async () => {
    await seed(h.model, [{ title: 'untagged', createdAt: new Date(Date.UTC(2000, 0, 1)) }]);
    const res = await h.http.get('/api/posts');

    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['page', 'pages', 'posts', 'total']);
    expect(res.body.page).toBe(1);
    expect(res.body.posts.length).toBe(Math.min(20, res.body.total));
    expect(res.body.pages).toBe(Math.ceil(res.body.total / 20));
    expect(res.body.posts.every((p: { status: string }) => p.status === 'published')).toBe(true);
    const times = res.body.posts.map((p: { createdAt: string }) => Date.parse(p.createdAt));
    expect(times).toEqual([...times].sort((a, b) => b - a));
  });

  it('when page 2 of limit 10 is asked, then exactly items 11 to 20 of the newest-first order', async () => {
    const res = await h.http.get('/api/posts').query({ tag, page: 2, limit: 10 });

    expect(res.status).toBe(200);
    expect(res.body.posts.map((p: { _id: string }) => p._id)).toEqual(newestFirst().slice(10, 20));
    expect(res.body).toMatchObject({ total: 25, page: 2, pages: 3 });
  });

  it('when the last page is partial, then it holds the remainder; past the end, then an empty list', async () => {
    const last = await h.http.get('/api/posts').query({ tag, page: 3, limit: 10 });
    expect(last.body.posts.map((p: { _id: string }) => p._id)).toEqual(newestFirst().slice(20));

    const past = await h.http.get('/api/posts').query({ tag, page: 4, limit: 10 });
    expect(past.body).toMatchObject({ posts: [], total: 25, page: 4, pages: 3 });
  });

  it('when the tag matches, then only published posts carrying it are counted; drafts never appear', async () => {
    const res = await h.http.get('/api/posts').query({ tag, limit: 50 });

    expect(res.body.total).toBe(25);
    expect(res.body.posts).toHaveLength(25);
    expect(res.body.posts.map((p: { title: string }) => p.title)).not.toContain('A draft with the tag');
  });

  it('when the tag has capitals, then it is lowercased and applied', async () => {
    const res = await h.http.get('/api/posts').query({ tag: tag.toUpperCase(), limit: 5 });

    expect(res.body.total).toBe(25);
  });

  it.each([
    ['a tag with a space', 'two words'],
    ['a tag with punctuation', 'semi;colon'],
    ['a 41-character tag', 'a'.repeat(41)],
    ['an empty tag', ''],
    ['an operator-looking tag', '{"$ne":null}'],
  ])('when given %s, then the filter is ignored and all published posts are listed', async (_case, bad) => {
    const all = await h.http.get('/api/posts').query({ limit: 1 });
    const res = await h.http.get('/api/posts').query({ tag: bad, limit: 1 });

    expect(res.status).toBe(200);
    expect(res.body.total).toBe(all.body.total);
  });

  it('when the tag is exactly 40 characters, then it is applied', async () => {
    const long = `x${uniqueTag('forty')}`.padEnd(40, 'z');
    expect(long).toHaveLength(40);
    await seed(h.model, [{ title: 'forty', tags: [long] }]);

    const res = await h.http.get('/api/posts').query({ tag: long });
    expect(res.body.total).toBe(1);
    expect(res.body.posts[0].title).toBe('forty');
  });

  it('when the tag is given twice, then it is not a string and is ignored', async () => {
    const all = await h.http.get('/api/posts').query({ limit: 1 });
    const res = await h.http.get(`/api/posts?tag=${tag}&tag=other&limit=1`);

    expect(res.status).toBe(200);
    expect(res.body.total).toBe(all.body.total);
  });

  it.each([
    ['0', 1],
    ['-3', 1],
    ['abc', 1],
    ['1.5', 1],
    ['', 1],
    ['2', 2],
  ])('when page is %j, then page %d is served', async (page, expected) => {
    const res = await h.http.get('/api/posts').query({ tag, page, limit: 10 });

    expect(res.status).toBe(200);
    expect(res.body.page).toBe(expected);
    expect(res.body.posts[0]._id).toBe(newestFirst()[(expected - 1) * 10]);
  });

  it.each([
    ['0', 20],
    ['-1', 20],
    ['ten', 20],
    ['7', 7],
    ['50', 25],
    ['51', 25],
    ['1000000', 25],
  ])('when limit is %j, then %d posts of the 25 come back', async (limit, count) => {
    const res = await h.http.get('/api/posts').query({ tag, limit });

    expect(res.status).toBe(200);
    expect(res.body.posts).toHaveLength(count);
  });

  it('when limit is above 50, then pages is computed with the capped limit', async () => {
    await seed(
      h.model,
      Array.from({ length: 51 }, () => ({ tags: ['capped-limit-check'] })),
    );
    const res = await h.http.get('/api/posts').query({ tag: 'capped-limit-check', limit: 500 });

    expect(res.body.posts).toHaveLength(50);
    expect(res.body).toMatchObject({ total: 51, pages: 2 });
  });

  it('when a post is listed, then it carries every field of the Post shape', async () => {
    const res = await h.http.get('/api/posts').query({ tag, limit: 1 });
    const post = res.body.posts[0];

    expect(Object.keys(post).sort()).toEqual(
      ['_id', 'authorId', 'body', 'createdAt', 'publishedAt', 'status', 'tags', 'title', 'updatedAt'].sort(),
    );
    expect(post.tags).toEqual([tag, 'shared']);
  });

  it('when the database fails unexpectedly, then 500 with the fetch-posts message', async () => {
    await markListingChanged(h.model.db);
    const spy = jest.spyOn(h.model, 'find').mockImplementationOnce(() => {
      throw new Error('boom');
    });
    try {
      const res = await h.http.get('/api/posts');
      expect(res.status).toBe(500);
      expect(res.body).toEqual({ error: 'Failed to fetch posts' });
    } finally {
      spy.mockRestore();
    }
  });
});
