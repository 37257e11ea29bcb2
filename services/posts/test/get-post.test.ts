import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { newAuthor, type PostsHarness, seed, startPosts } from './helpers';

let h: PostsHarness;
const author = newAuthor();
const stranger = newAuthor();
let publishedId: string;
let draftId: string;

beforeAll(async () => {
  h = await startPosts(__filename);
  [publishedId, draftId] = (await seed(h.model, [
    { title: 'Public', authorId: author.id },
    { title: 'Private draft', authorId: author.id, status: 'draft' },
  ])) as [string, string];
});
afterAll(async () => {
  await h.stop();
});

describe('GET /api/posts/:id', () => {
  it('when the post is published, then anyone gets it', async () => {
    const res = await h.http.get(`/api/posts/${publishedId}`);

    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ _id: publishedId, title: 'Public', authorId: author.id, status: 'published' });
  });

  it('when no post has the id, then 404 post-not-found', async () => {
    const res = await h.http.get('/api/posts/0123456789abcdef01234567');

    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'Post not found' });
  });

  it('when the post is a draft, then only its author sees it; anonymous and other users get 404', async () => {
    const own = await h.http.get(`/api/posts/${draftId}`).set(author.auth);
    expect(own.status).toBe(200);
    expect(own.body.status).toBe('draft');

    for (const res of [
      await h.http.get(`/api/posts/${draftId}`),
      await h.http.get(`/api/posts/${draftId}`).set(stranger.auth),
    ]) {
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'Post not found' });
    }
  });

  it('when a token is sent but is invalid, then 401 rather than a silent anonymous read', async () => {
    const res = await h.http.get(`/api/posts/${publishedId}`).set('Authorization', 'Bearer not.a.token');

    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'Invalid or expired token' });
  });

  it.each(['123', 'not-an-id', '0123456789abcdef0123456z', '0123456789abcdef012345678', '%24gt', "'%20OR%201=1"])(
    'when the id is %j, then 400 invalid-ID-format',
    async (id) => {
      const res = await h.http.get(`/api/posts/${id}`);

      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'Invalid ID format' });
    },
  );
});
