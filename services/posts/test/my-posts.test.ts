import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { newAuthor, type PostsHarness, seed, startPosts } from './helpers';

let h: PostsHarness;

beforeAll(async () => {
  h = await startPosts(__filename);
});
afterAll(async () => {
  await h.db.drop();
});

describe('GET /api/posts/my-posts', () => {
  it("when the caller has posts of both statuses, then all of them and nobody else's, newest first", async () => {
    const me = newAuthor();
    const other = newAuthor();
    const [oldest, middle, newest] = await seed(h.model, [
      { authorId: me.id, status: 'published', createdAt: new Date('2024-01-01') },
      { authorId: me.id, status: 'draft', createdAt: new Date('2024-02-01') },
      { authorId: me.id, status: 'published', createdAt: new Date('2024-03-01') },
    ]);
    await seed(h.model, [{ authorId: other.id }, { authorId: other.id, status: 'draft' }]);

    const res = await h.http.get('/api/posts/my-posts').set(me.auth);

    expect(res.status).toBe(200);
    expect(res.body.map((p: { _id: string }) => p._id)).toEqual([newest, middle, oldest]);
    expect(res.body.map((p: { status: string }) => p.status)).toEqual(['published', 'draft', 'published']);
  });

  it('when the caller has no posts, then an empty array', async () => {
    const res = await h.http.get('/api/posts/my-posts').set(newAuthor().auth);

    expect(res.status).toBe(200);
    expect(res.body).toEqual([]);
  });

  it.each([
    ['no header', undefined, 'No token provided'],
    ['a Basic header', 'Basic dXNlcjpwYXNz', 'No token provided'],
    ['a lowercase bearer', 'bearer abc', 'No token provided'],
    ['a malformed token', 'Bearer abc.def', 'Invalid or expired token'],
  ])('when sent with %s, then 401 and the handler does not run', async (_case, header, message) => {
    const req = h.http.get('/api/posts/my-posts');
    const res = await (header ? req.set('Authorization', header) : req);

    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: message });
  });
});
