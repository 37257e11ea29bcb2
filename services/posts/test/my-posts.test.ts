import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { newAuthor, type PostsHarness, seed, startPosts } from './helpers';

let h: PostsHarness;

beforeAll(async () => {
  h = await startPosts(__filename);
});
afterAll(async () => {
  await h.stop();
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

  it('when the caller has more than 100 posts, then the first 100, newest first, and a Link to the rest; each exactly once', async () => {
    const me = newAuthor();
    const ids = await seed(
      h.model,
      Array.from({ length: 103 }, (_, i) => ({ authorId: me.id, createdAt: new Date(Date.UTC(2024, 0, 1, 0, i)) })),
    );
    const newestFirst = [...ids].reverse();

    const first = await h.http.get('/api/posts/my-posts').set(me.auth);
    expect(first.status).toBe(200);
    expect(first.body).toHaveLength(100);
    const next = /^<([^>]+)>; rel="next"$/.exec(first.headers.link ?? '')?.[1];
    expect(next).toMatch(/^\/api\/posts\/my-posts\?limit=100&cursor=[A-Za-z0-9_-]+$/);
    const rest = await h.http.get(next as string).set(me.auth);
    expect(rest.headers.link).toBeUndefined();
    expect([...first.body, ...rest.body].map((p: { _id: string }) => p._id)).toEqual(newestFirst);

    const small = await h.http.get('/api/posts/my-posts?limit=10').set(me.auth);
    expect(small.body.map((p: { _id: string }) => p._id)).toEqual(newestFirst.slice(0, 10));
    expect(small.headers.link).toMatch(/limit=10&cursor=/);
  });

  it('when the cursor is not one of ours, then 400 {error: "Invalid cursor"}', async () => {
    const res = await h.http.get('/api/posts/my-posts?cursor=xyz').set(newAuthor().auth);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'Invalid cursor' });
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
