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

describe('DELETE /api/posts/:id', () => {
  it('when the author deletes the post, then 204 with no body and it is gone', async () => {
    const [id] = await seed(h.model, [{ authorId: author.id }]);
    const res = await h.http.delete(`/api/posts/${id}`).set(author.auth);

    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect(await h.model.exists({ _id: id })).toBeNull();
  });

  it('when another user deletes the post, then 204 as well, and the post stays', async () => {
    const [id] = await seed(h.model, [{ authorId: author.id }]);
    const res = await h.http.delete(`/api/posts/${id}`).set(stranger.auth);

    expect(res.status).toBe(204);
    expect(await h.model.exists({ _id: id })).not.toBeNull();
  });

  it('when no post has the id, then 204', async () => {
    const res = await h.http.delete('/api/posts/0123456789abcdef01234567').set(author.auth);

    expect(res.status).toBe(204);
  });

  it('when the id is malformed, then 400; without a token, then 401', async () => {
    const bad = await h.http.delete('/api/posts/..%2F..%2Fetc').set(author.auth);
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ error: 'Invalid ID format' });

    const [id] = await seed(h.model, [{ authorId: author.id }]);
    const anonymous = await h.http.delete(`/api/posts/${id}`);
    expect(anonymous.status).toBe(401);
    expect(await h.model.exists({ _id: id })).not.toBeNull();
  });
});
