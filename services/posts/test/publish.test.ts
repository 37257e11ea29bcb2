import { HttpError } from '@cs/errors';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { newAuthor, type PostsHarness, seed, startPosts } from './helpers';

let h: PostsHarness;
const author = newAuthor();
const stranger = newAuthor();

beforeAll(async () => {
  h = await startPosts(__filename);
});
afterAll(async () => {
  await h.stop();
});

describe('the internal publish operation, publish(postId, userId)', () => {
  it('when the user is the author of a draft, then it is published with publishedAt now and returned', async () => {
    const [id] = (await seed(h.model, [{ authorId: author.id, status: 'draft' }])) as [string];
    const before = Date.now();
    const post = await h.posts.publish(id, author.id);

    expect(post).toMatchObject({ _id: id, status: 'published', authorId: author.id });
    expect(Date.parse(post.publishedAt ?? '')).toBeGreaterThanOrEqual(before - 1000);
    expect((await h.model.findById(id).lean())?.status).toBe('published');
  });

  it('when the user is not the author, then 404 and the draft stays a draft', async () => {
    const [id] = (await seed(h.model, [{ authorId: author.id, status: 'draft' }])) as [string];

    await expect(h.posts.publish(id, stranger.id)).rejects.toMatchObject({ status: 404 });
    expect(await h.model.findById(id).lean()).toMatchObject({ status: 'draft', publishedAt: null });
  });

  it('when the post is already published, then 409 and publishedAt is unchanged', async () => {
    const [id] = (await seed(h.model, [{ authorId: author.id, status: 'published' }])) as [string];
    const before = (await h.model.findById(id).lean())?.publishedAt;

    const error = await h.posts.publish(id, author.id).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HttpError);
    expect(error).toMatchObject({ status: 409, message: 'Post is already published' });
    expect((await h.model.findById(id).lean())?.publishedAt).toEqual(before);
  });

  it('when no post has the id, then 404', async () => {
    await expect(h.posts.publish('0123456789abcdef01234567', author.id)).rejects.toMatchObject({ status: 404 });
  });
});
