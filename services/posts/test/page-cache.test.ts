/**
 * Kept pages of the public list (page-cache.ts), across two replicas of the posts service with
 * their own connections to one real database: a page is kept while the listing does not change,
 * and every change to a published post, made through either replica, is in the other's very next
 * answer.
 */
import { api, captureLogger, TEST_JWT_SECRET, tellDeleted } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import mongoose, { type Connection } from 'mongoose';
import { createApp } from '../src/app';
import { createPageCache, markListingChanged } from '../src/page-cache';
import { newAuthor, type PostsHarness, seed, startPosts, uniqueTag } from './helpers';

let h: PostsHarness;
let other: Connection;
/** The second replica. */
let b: ReturnType<typeof api>;

beforeAll(async () => {
  h = await startPosts(__filename);
  other = await mongoose.createConnection(h.db.url).asPromise();
  const { app } = await createApp({
    config: { JWT_SECRET: TEST_JWT_SECRET },
    connection: other,
    logger: captureLogger('posts-b').logger,
  });
  b = api(app.callback());
});
afterAll(async () => {
  await other.close();
  await h.db.drop();
});

/** The titles replica B lists under the tag. */
async function listedOnB(tag: string): Promise<string[]> {
  const res = await b.get('/api/posts').query({ tag });
  expect(res.status).toBe(200);
  expect(res.body.total).toBe(res.body.posts.length);
  return res.body.posts.map((p: { title: string }) => p.title);
}

describe('kept pages of the public list', () => {
  it('when the database changes behind the service, then the kept page is answered, until the listing is marked changed', async () => {
    const tag = uniqueTag('kept');
    await seed(h.model, [{ title: 'First', tags: [tag] }]);
    expect(await listedOnB(tag)).toEqual(['First']);

    // Written around the service, and not marked: replica B still answers its kept page.
    await h.model.collection.updateOne({ tags: tag }, { $set: { title: 'Changed quietly' } });
    expect(await listedOnB(tag)).toEqual(['First']);

    await markListingChanged(h.model.db);
    expect(await listedOnB(tag)).toEqual(['Changed quietly']);
  });

  it('when a draft is published on replica A, then replica B lists it in its next answer', async () => {
    const tag = uniqueTag('publish');
    const author = newAuthor();
    const [id] = await seed(h.model, [{ title: 'Draft', tags: [tag], status: 'draft', authorId: author.id }]);
    expect(await listedOnB(tag)).toEqual([]);

    await h.posts.publish(id as string, author.id);
    expect(await listedOnB(tag)).toEqual(['Draft']);
  });

  it('when a published post is renamed, unpublished, or deleted on replica A, then replica B answers each change next', async () => {
    const tag = uniqueTag('change');
    const author = newAuthor();
    const [id] = await seed(h.model, [{ title: 'Before', tags: [tag], authorId: author.id }]);
    expect(await listedOnB(tag)).toEqual(['Before']);

    await h.http.put(`/api/posts/${id}`).set(author.auth).send({ title: 'After' }).expect(200);
    expect(await listedOnB(tag)).toEqual(['After']);

    await h.http.put(`/api/posts/${id}`).set(author.auth).send({ status: 'draft' }).expect(200);
    expect(await listedOnB(tag)).toEqual([]);

    await h.http.put(`/api/posts/${id}`).set(author.auth).send({ status: 'published' }).expect(200);
    expect(await listedOnB(tag)).toEqual(['After']);

    await h.http.delete(`/api/posts/${id}`).set(author.auth).expect(204);
    expect(await listedOnB(tag)).toEqual([]);
  });

  it("when an author's account is deleted on replica A, then replica B no longer lists their posts", async () => {
    const tag = uniqueTag('account');
    const author = newAuthor();
    await seed(h.model, [
      { title: 'Theirs', tags: [tag], authorId: author.id },
      { title: 'Kept', tags: [tag] },
    ]);
    expect((await listedOnB(tag)).sort()).toEqual(['Kept', 'Theirs']);

    await tellDeleted(h.http, author).expect(204);
    expect(await listedOnB(tag)).toEqual(['Kept']);
  });

  it('when many requests ask at once for a page that is not kept, then it is computed once', async () => {
    const cache = createPageCache<number>(h.model.db, () => 1);
    let computed = 0;
    const compute = async () => {
      computed += 1;
      await new Promise((resolve) => setTimeout(resolve, 50));
      return computed;
    };
    const answers = await Promise.all(Array.from({ length: 10 }, () => cache.get('page', compute)));
    expect(answers).toEqual(Array(10).fill(1));
    expect(computed).toBe(1);

    await cache.changed();
    expect(await cache.get('page', compute)).toBe(2);
  });

  it('when a request that read the token before a change comes after a newer piece, then it gets the newer piece, not a computation of its own', async () => {
    const cache = createPageCache<string>(h.model.db, () => 1);
    const before = await cache.view();
    await markListingChanged(h.model.db);
    const after = await cache.view();

    expect(await after.get('page', async () => 'after the change')).toBe('after the change');
    expect(await before.get('page', async () => 'computed again')).toBe('after the change');
  });

  it('when a piece was computed under a token read before a change, then a request that read after it computes anew', async () => {
    const cache = createPageCache<string>(h.model.db, () => 1);
    const before = await cache.view();
    expect(await before.get('page', async () => 'before the change')).toBe('before the change');
    await markListingChanged(h.model.db);

    const after = await cache.view();
    expect(await after.get('page', async () => 'after the change')).toBe('after the change');
  });

  it('when a computation fails, then it is not kept: the next request computes again', async () => {
    const cache = createPageCache<string>(h.model.db, () => 1);
    await expect(cache.get('page', () => Promise.reject(new Error('database down')))).rejects.toThrow('database down');
    expect(await cache.get('page', async () => 'recovered')).toBe('recovered');
  });
});
