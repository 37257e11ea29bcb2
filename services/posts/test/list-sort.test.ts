/**
 * `GET /api/posts?sort=newest|oldest|title`: the contract's newest first stays the default; oldest
 * first is its reverse; by title is case-folded A to Z, then newest first, then `_id`. Every order
 * is total, so pages cut from it never overlap or skip, and each combines with tag and author.
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
let tag: string;
const author = newAuthor();
/** Published under `tag`, created one minute apart in this order (the last is the newest). */
const TITLES = ['cherry', 'Banana', 'apple', 'Date', 'banana', 'elderberry'];

beforeAll(async () => {
  h = await startPosts(__filename);
  replica = await startSecondReplica(h);
  b = replica.http;
  tag = uniqueTag('sorted');
  await seed(
    h.model,
    TITLES.map((title, i) => ({ title, tags: [tag], authorId: i % 2 === 0 ? author.id : undefined })),
  );
  await seed(h.model, [{ title: 'aardvark, a draft', tags: [tag], status: 'draft', authorId: author.id }]);
});
afterAll(async () => {
  await replica?.close();
  await h.stop();
});

type Listed = { body: { posts: { _id: string; title: string }[] } };
const titles = (res: Listed) => res.body.posts.map((p) => p.title);
const list = (query: Record<string, string | number>) => h.http.get('/api/posts').query({ tag, ...query });

describe('GET /api/posts?sort=', () => {
  it('when no sort is given, then the contract’s order: newest first, as with sort=newest', async () => {
    const plain = await list({});
    const newest = await list({ sort: 'newest' });

    expect(titles(plain)).toEqual([...TITLES].reverse());
    expect(newest.body).toEqual(plain.body);
  });

  it('when sort is oldest, then oldest first, with the same total and pages', async () => {
    const res = await list({ sort: 'oldest' });

    expect(titles(res)).toEqual(TITLES);
    expect(res.body).toMatchObject({ total: 6, page: 1, pages: 1 });
  });

  it('when sort is title, then titles case-folded A to Z: “apple” < “Banana” < “cherry”; equal titles newest first', async () => {
    const res = await list({ sort: 'title' });

    // "banana" (index 4) is newer than "Banana" (index 1): it comes first.
    expect(titles(res)).toEqual(['apple', 'banana', 'Banana', 'cherry', 'Date', 'elderberry']);
  });

  it('when titles and dates are both equal, then `_id` decides, newest id first, on every page', async () => {
    const twins = uniqueTag('twins');
    const at = new Date(Date.UTC(2023, 5, 1));
    const seeded = await seed(
      h.model,
      Array.from({ length: 4 }, () => ({ title: 'Same', tags: [twins], createdAt: at })),
    );
    const pages = await Promise.all(
      [1, 2].map((page) => h.http.get('/api/posts').query({ tag: twins, sort: 'title', page, limit: 2 })),
    );

    expect(pages.flatMap((res) => res.body.posts.map((p: { _id: string }) => p._id))).toEqual(
      [...seeded].sort().reverse(),
    );
  });

  it.each([
    ['newest', [...TITLES].reverse()],
    ['oldest', TITLES],
    ['title', ['apple', 'banana', 'Banana', 'cherry', 'Date', 'elderberry']],
  ])(
    'when the %s order is read in pages of 4, then the pages are that order cut in two, with total and pages',
    async (sort, order) => {
      const first = await list({ sort, limit: 4 });
      const second = await list({ sort, limit: 4, page: 2 });
      const past = await list({ sort, limit: 4, page: 3 });

      expect(titles(first)).toEqual(order.slice(0, 4));
      expect(titles(second)).toEqual(order.slice(4));
      expect(past.body).toMatchObject({ posts: [], total: 6, page: 3, pages: 2 });
      expect(second.body).toMatchObject({ total: 6, page: 2, pages: 2 });
    },
  );

  it('when sort is combined with an author and a tag, then only that author’s posts with the tag, in that order', async () => {
    const byTitle = await list({ sort: 'title', author: author.id });
    const oldest = await list({ sort: 'oldest', author: author.id, limit: 2, page: 2 });

    expect(titles(byTitle)).toEqual(['apple', 'banana', 'cherry']);
    expect(byTitle.body.total).toBe(3);
    expect(titles(oldest)).toEqual(['banana']);
    expect(oldest.body).toMatchObject({ total: 3, page: 2, pages: 2 });
  });

  it('when sort has capitals, then it is applied, as a tag with capitals is', async () => {
    const res = await list({ sort: 'TITLE' });

    expect(titles(res)[0]).toBe('apple');
  });

  it.each([
    ['an unknown order', 'random'],
    ['an order with a space', 'title '],
    ['an empty sort', ''],
    ['an operator-looking sort', '{"$ne":null}'],
  ])('when given %s as the sort, then it is ignored: newest first, as without it', async (_case, bad) => {
    const plain = await list({});
    const res = await list({ sort: bad });

    expect(res.status).toBe(200);
    expect(res.body).toEqual(plain.body);
  });

  it('when the sort is given twice, then it is not a string and is ignored', async () => {
    const plain = await list({});
    const res = await h.http.get(`/api/posts?tag=${tag}&sort=title&sort=oldest`);

    expect(res.status).toBe(200);
    expect(res.body).toEqual(plain.body);
  });

  it('when a published post is renamed on replica A, then replica B’s next answer by title has it in its new place', async () => {
    const renamed = uniqueTag('renamed');
    const writer = newAuthor();
    const [id] = await seed(h.model, [
      { title: 'Middle', tags: [renamed], authorId: writer.id },
      { title: 'Zebra', tags: [renamed] },
      { title: 'Apple', tags: [renamed] },
    ]);
    const onB = async () => titles(await b.get('/api/posts').query({ tag: renamed, sort: 'title' }));
    expect(await onB()).toEqual(['Apple', 'Middle', 'Zebra']);

    await h.http.put(`/api/posts/${id}`).set(writer.auth).send({ title: 'zoo' }).expect(200);
    expect(await onB()).toEqual(['Apple', 'Zebra', 'zoo']);
    expect(titles(await h.http.get('/api/posts').query({ tag: renamed, sort: 'title' }))).toEqual([
      'Apple',
      'Zebra',
      'zoo',
    ]);
  });
});
