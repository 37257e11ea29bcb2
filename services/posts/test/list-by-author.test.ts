/**
 * `GET /api/posts?author=<id>`: one author's published posts, paged like the list and cut from the
 * same listing kept in memory, and fresh with its guarantee: a publish or an unpublish acknowledged
 * on one replica is in the next answer of every replica.
 */
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
/** A second replica of the service, on its own connection to the same database. */
let b: ReturnType<typeof api>;
const author = newAuthor();
const someoneElse = newAuthor();
let tag: string;
/** The author's five published posts, oldest first (index 4 is the newest). */
let theirs: string[];

beforeAll(async () => {
  h = await startPosts(__filename);
  replica = await startSecondReplica(h);
  b = replica.http;
  tag = uniqueTag('by-author');
  theirs = await seed(
    h.model,
    Array.from({ length: 5 }, (_, i) => ({
      title: `Theirs ${i}`,
      authorId: author.id,
      tags: i % 2 === 0 ? [tag] : [],
    })),
  );
  await seed(h.model, [
    { title: 'Their draft', authorId: author.id, status: 'draft', tags: [tag] },
    { title: 'Someone else’s', authorId: someoneElse.id, tags: [tag] },
  ]);
});
afterAll(async () => {
  await replica?.close();
  await h.stop();
});

const ids = (res: { body: { posts: { _id: string }[] } }) => res.body.posts.map((p) => p._id);
const newestFirst = () => [...theirs].reverse();

describe('GET /api/posts?author=', () => {
  it('when an author is given, then only their published posts are listed, newest first: no drafts, no one else’s', async () => {
    const res = await h.http.get('/api/posts').query({ author: author.id });

    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['page', 'pages', 'posts', 'total']);
    expect(ids(res)).toEqual(newestFirst());
    expect(res.body).toMatchObject({ total: 5, page: 1, pages: 1 });
  });

  it('when an author’s posts are paged, then each page holds the next of their posts, and total and pages count theirs alone', async () => {
    const pages = await Promise.all(
      [1, 2, 3, 4].map((page) => h.http.get('/api/posts').query({ author: author.id, page, limit: 2 })),
    );

    expect(pages.map(ids)).toEqual([newestFirst().slice(0, 2), newestFirst().slice(2, 4), newestFirst().slice(4), []]);
    for (const [i, res] of pages.entries()) expect(res.body).toMatchObject({ total: 5, page: i + 1, pages: 3 });
  });

  it('when an author and a tag are given, then only that author’s published posts with the tag are listed', async () => {
    const res = await h.http.get('/api/posts').query({ author: author.id, tag });

    expect(ids(res)).toEqual([theirs[4], theirs[2], theirs[0]]);
    expect(res.body.total).toBe(3);
  });

  it('when the author’s id is written in capitals, then it is lowercased and applied', async () => {
    const res = await h.http.get('/api/posts').query({ author: author.id.toUpperCase() });

    expect(ids(res)).toEqual(newestFirst());
  });

  it('when an author has no published post, then an empty page with total 0', async () => {
    const res = await h.http.get('/api/posts').query({ author: newAuthor().id });

    expect(res.status).toBe(200);
    expect(res.body).toEqual({ posts: [], total: 0, page: 1, pages: 0 });
  });

  it.each([
    ['a word', 'someone'],
    ['23 hex digits', 'a'.repeat(23)],
    ['25 hex digits', 'a'.repeat(25)],
    ['an empty author', ''],
    ['an operator-looking author', '{"$ne":null}'],
  ])('when given %s as the author, then it is ignored: the same answer as without it', async (_case, bad) => {
    const all = await h.http.get('/api/posts').query({ tag, limit: 50 });
    const res = await h.http.get('/api/posts').query({ tag, author: bad, limit: 50 });

    expect(res.status).toBe(200);
    expect(res.body).toEqual(all.body);
    expect(res.body.total).toBe(4);
  });

  it('when the author is given twice, then it is not a string and is ignored, as a tag given twice is', async () => {
    const all = await h.http.get('/api/posts').query({ tag, limit: 50 });
    const res = await h.http.get(`/api/posts?tag=${tag}&author=${author.id}&author=${someoneElse.id}&limit=50`);

    expect(res.status).toBe(200);
    expect(res.body).toEqual(all.body);
  });
});

describe('an author’s list while their posts change on another replica', () => {
  it('when the author publishes a draft on replica A, then replica B lists it under ?author= in its next answer; when it is unpublished, then it is gone from the next', async () => {
    const writer = newAuthor();
    const [older, draft] = await seed(h.model, [
      { title: 'Already out', authorId: writer.id },
      { title: 'Just written', authorId: writer.id, status: 'draft' },
    ]);
    const onB = async () => ids(await b.get('/api/posts').query({ author: writer.id }));
    expect(await onB()).toEqual([older]);

    await h.http.put(`/api/posts/${draft}`).set(writer.auth).send({ status: 'published' }).expect(200);
    expect(await onB()).toEqual([draft, older]);

    await h.http.put(`/api/posts/${draft}`).set(writer.auth).send({ status: 'draft' }).expect(200);
    expect(await onB()).toEqual([older]);
  });

  it('when an author publishes a draft, then the author’s list on either replica shows it once the request is answered', async () => {
    const writer = newAuthor();
    const [draft] = await seed(h.model, [{ title: 'Published inside', authorId: writer.id, status: 'draft' }]);
    expect(ids(await b.get('/api/posts').query({ author: writer.id }))).toEqual([]);

    await h.http.put(`/api/posts/${draft}`).set(writer.auth).send({ status: 'published' }).expect(200);
    expect(ids(await h.http.get('/api/posts').query({ author: writer.id }))).toEqual([draft]);
    expect(ids(await b.get('/api/posts').query({ author: writer.id }))).toEqual([draft]);
  });
});
