/**
 * `GET /api/posts?q=` searches the published posts, `GET /api/posts/my-posts?q=` the caller's own
 * (drafts included): ranked, paged as each list pages, and as fresh as the public list on every
 * replica. Matching itself (folding, prefixes, typos, phrases) is held in libs/search's tests;
 * here, that it reaches through each route.
 */

import { LIMITS, searchMessages } from '@cs/contract';
import type { api } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  newAuthor,
  type PostsHarness,
  type SecondReplica,
  seed,
  startPosts,
  startSecondReplica,
  uniqueTag,
} from './helpers';

let h: PostsHarness;
let replica: SecondReplica | undefined;
let b: ReturnType<typeof api>;
const author = newAuthor();
const other = newAuthor();
let tag: string;
/** The seeded posts by name. */
const post: Record<string, string> = {};

beforeAll(async () => {
  h = await startPosts(__filename);
  replica = await startSecondReplica(h);
  b = replica.http;
  tag = uniqueTag('search');
  const seeded = [
    { name: 'inBody', title: 'Weekly notes', body: 'What we learnt about sourdough this week.', authorId: author.id },
    { name: 'inTitle', title: 'Sourdough for beginners', body: 'Flour, water, salt and time.', authorId: other.id },
    { name: 'tagged', title: 'Bread', body: 'A loaf a day, every day.', authorId: other.id, tags: [tag, 'baking'] },
    { name: 'creme', title: 'Crème brûlée', body: 'Custard under burnt sugar, the dessert.', authorId: author.id },
    { name: 'twinOld', title: 'Twin', body: 'Identical words in both of these posts.', authorId: author.id },
    { name: 'twinNew', title: 'Twin', body: 'Identical words in both of these posts.', authorId: author.id },
    {
      name: 'draft',
      title: 'Sourdough draft',
      body: 'Not out yet, sourdough secrets.',
      authorId: author.id,
      status: 'draft' as const,
    },
  ];
  const ids = await seed(h.model, seeded);
  for (const [i, { name }] of seeded.entries()) post[name] = ids[i] as string;
});
afterAll(async () => {
  await replica?.close();
  await h.stop();
});

const ids = (res: { body: { posts: { _id: string }[] } }) => res.body.posts.map((p) => p._id);

describe('GET /api/posts?q=', () => {
  it('answers the list’s own shape, best first: a match in the title above one in the body; never a draft', async () => {
    const res = await h.http.get('/api/posts').query({ q: 'sourdough' });

    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['page', 'pages', 'posts', 'total']);
    expect(ids(res)).toEqual([post.inTitle, post.inBody]);
    expect(res.body).toMatchObject({ total: 2, page: 1, pages: 1 });
  });

  it('finds words folded, the last one as it is being typed, and a tag', async () => {
    expect(ids(await h.http.get('/api/posts').query({ q: 'CREME Brulee' }))).toEqual([post.creme]);
    expect(ids(await h.http.get('/api/posts').query({ q: 'burnt sug' }))).toEqual([post.creme]);
    expect(ids(await h.http.get('/api/posts').query({ q: tag }))).toEqual([post.tagged]);
    expect(ids(await h.http.get('/api/posts').query({ q: '"under burnt sugar"' }))).toEqual([post.creme]);
    expect(ids(await h.http.get('/api/posts').query({ q: '"sugar burnt"' }))).toEqual([]);
  });

  it('puts the newer of two equal matches first, and pages them like the list', async () => {
    const first = await h.http.get('/api/posts').query({ q: 'identical', limit: 1 });
    const second = await h.http.get('/api/posts').query({ q: 'identical', limit: 1, page: 2 });

    expect([...ids(first), ...ids(second)]).toEqual([post.twinNew, post.twinOld]);
    expect(first.body).toMatchObject({ total: 2, page: 1, pages: 2 });
  });

  it('combines with author and tag, and ignores sort', async () => {
    const byAuthor = await h.http.get('/api/posts').query({ q: 'sourdough', author: author.id });
    const byTag = await h.http.get('/api/posts').query({ q: 'day', tag });
    const sorted = await h.http.get('/api/posts').query({ q: 'sourdough', sort: 'title' });

    expect(ids(byAuthor)).toEqual([post.inBody]);
    expect(ids(byTag)).toEqual([post.tagged]);
    expect(ids(sorted)).toEqual([post.inTitle, post.inBody]);
  });

  it('takes an empty q, or one with no word, as no q', async () => {
    const all = await h.http.get('/api/posts');
    for (const q of ['', '   ', '?!']) {
      const res = await h.http.get('/api/posts').query({ q });
      expect(res.status).toBe(200);
      expect(res.body).toEqual(all.body);
    }
  });

  it(`refuses more than ${LIMITS.searchQueryMax} characters or ${LIMITS.searchWordsMax} words with 400`, async () => {
    const long = await h.http.get('/api/posts').query({ q: 'a'.repeat(LIMITS.searchQueryMax + 1) });
    const many = await h.http.get('/api/posts').query({ q: Array.from({ length: 11 }, (_, i) => `w${i}`).join(' ') });

    for (const res of [long, many]) {
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: searchMessages.tooLong });
    }
  });
});

describe('a search while posts change on another replica', () => {
  it('finds a post on replica B once its publish is answered on A, with its new words once an edit is, and not once its unpublish or delete is', async () => {
    const writer = newAuthor();
    const [draft] = await seed(h.model, [
      { title: 'Zanzibar spice market', body: 'Cloves everywhere.', authorId: writer.id, status: 'draft' },
    ]);
    const onB = async (q: string) => ids(await b.get('/api/posts').query({ q }));
    expect(await onB('zanzibar')).toEqual([]);

    await h.http.put(`/api/posts/${draft}`).set(writer.auth).send({ status: 'published' }).expect(200);
    expect(await onB('zanzibar')).toEqual([draft]);

    await h.http.put(`/api/posts/${draft}`).set(writer.auth).send({ title: 'Madagascar vanilla' }).expect(200);
    expect(await onB('zanzibar')).toEqual([]);
    expect(await onB('madagascar')).toEqual([draft]);
    // Replica A applied its own write from the post as written: the body's words are there too.
    expect(ids(await h.http.get('/api/posts').query({ q: 'cloves madagascar' }))).toEqual([draft]);

    await h.http.put(`/api/posts/${draft}`).set(writer.auth).send({ status: 'draft' }).expect(200);
    expect(await onB('madagascar')).toEqual([]);

    await h.http.put(`/api/posts/${draft}`).set(writer.auth).send({ status: 'published' }).expect(200);
    expect(await onB('madagascar')).toEqual([draft]);
    await h.http.delete(`/api/posts/${draft}`).set(writer.auth).expect(204);
    expect(await onB('madagascar')).toEqual([]);
  });

  it('finds none of an author’s posts on replica B once their account’s removal is done on A', async () => {
    const leaving = newAuthor();
    await seed(h.model, [{ title: 'Kilimanjaro at dawn', authorId: leaving.id }]);
    expect(ids(await b.get('/api/posts').query({ q: 'kilimanjaro' }))).toHaveLength(1);

    await h.posts.removeAllBy(leaving.id);
    expect(ids(await b.get('/api/posts').query({ q: 'kilimanjaro' }))).toEqual([]);
  });
});

describe('GET /api/posts/my-posts?q=', () => {
  it('searches the caller’s own posts, drafts included, and no one else’s', async () => {
    const mine = await h.http.get('/api/posts/my-posts').set(author.auth).query({ q: 'sourdough' });
    const theirs = await h.http.get('/api/posts/my-posts').set(other.auth).query({ q: 'sourdough' });

    expect(mine.status).toBe(200);
    expect(mine.body.map((p: { _id: string }) => p._id)).toEqual([post.draft, post.inBody]);
    expect(theirs.body.map((p: { _id: string }) => p._id)).toEqual([post.inTitle]);
  });

  it('gives further pages through the Link header, which keeps the search', async () => {
    const first = await h.http.get('/api/posts/my-posts').set(author.auth).query({ q: 'sourdough', limit: 1 });
    const link = /<([^>]+)>; rel="next"/.exec(first.headers.link ?? '')?.[1] as string;
    expect(new URL(link, 'http://x').searchParams.get('q')).toBe('sourdough');
    const second = await h.http.get(link).set(author.auth);

    expect([...first.body, ...second.body].map((p: { _id: string }) => p._id)).toEqual([post.draft, post.inBody]);
    expect(second.headers.link).toBeUndefined();
  });

  it('refuses a cursor it did not make, and a q past its bounds, with 400', async () => {
    const cursor = await h.http.get('/api/posts/my-posts').set(author.auth).query({ q: 'sourdough', cursor: 'nope' });
    const long = await h.http
      .get('/api/posts/my-posts')
      .set(author.auth)
      .query({ q: 'x'.repeat(201) });

    expect(cursor.status).toBe(400);
    expect(long.status).toBe(400);
    expect(long.body).toEqual({ error: searchMessages.tooLong });
  });
});
