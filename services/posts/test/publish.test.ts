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

const publish = (id: string, caller: { auth: Record<string, string> }) =>
  h.http.put(`/api/posts/${id}`).set(caller.auth).send({ status: 'published' });

describe('publishing a draft, PUT /api/posts/:id {status: published}', () => {
  it('when the caller is the author of a draft, then it is published with publishedAt now and returned', async () => {
    const [id] = (await seed(h.model, [{ authorId: author.id, status: 'draft' }])) as [string];
    const before = Date.now();
    const res = await publish(id, author).expect(200);

    expect(res.body).toMatchObject({ _id: id, status: 'published', authorId: author.id });
    expect(Date.parse(res.body.publishedAt ?? '')).toBeGreaterThanOrEqual(before - 1000);
    expect((await h.model.findById(id).lean())?.status).toBe('published');
  });

  it('when the caller is not the author, then 404 and the draft stays a draft', async () => {
    const [id] = (await seed(h.model, [{ authorId: author.id, status: 'draft' }])) as [string];

    await publish(id, stranger).expect(404);
    expect(await h.model.findById(id).lean()).toMatchObject({ status: 'draft', publishedAt: null });
  });

  it('when the post is already published, then publishedAt is unchanged', async () => {
    const [id] = (await seed(h.model, [{ authorId: author.id, status: 'published' }])) as [string];
    const before = (await h.model.findById(id).lean())?.publishedAt;

    const res = await publish(id, author).expect(200);
    expect(res.body.publishedAt).toBe(before?.toISOString());
    expect((await h.model.findById(id).lean())?.publishedAt).toEqual(before);
  });

  it('when no post has the id, then 404', async () => {
    await publish('0123456789abcdef01234567', author).expect(404);
  });
});
