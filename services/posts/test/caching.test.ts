import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { newAuthor, type PostsHarness, seed, startPosts, uniqueTag } from './helpers';

let h: PostsHarness;
const author = newAuthor();

beforeAll(async () => {
  h = await startPosts(__filename);
});
afterAll(async () => {
  await h.stop();
});

describe('HTTP caching of the public reads', () => {
  it('when a post is read, then it carries an ETag; sent back as If-None-Match, then 304 with no body', async () => {
    const [id] = await seed(h.model, [{ authorId: author.id }]);
    const first = await h.http.get(`/api/posts/${id}`);
    const etag = first.headers.etag as string;

    expect(first.status).toBe(200);
    expect(etag).toMatch(/^"[\w-]{27}"$/);
    expect(first.headers['cache-control']).toBe('private, no-cache');

    const again = await h.http.get(`/api/posts/${id}`).set('If-None-Match', etag);
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
  });

  it('when If-None-Match comes with Cache-Control: no-cache, as fetch sends it, or as a list or weak tag, then still 304', async () => {
    const { body } = await h.http
      .post('/api/posts')
      .set(author.auth)
      .send({ title: 'Fetched', body: 'Read by a browser.' });
    await h.http.put(`/api/posts/${body._id}`).set(author.auth).send({ status: 'published' }).expect(200);
    const etag = (await h.http.get(`/api/posts/${body._id}`)).headers.etag as string;

    for (const sent of [etag, `"other", ${etag}`, `W/${etag}`, '*']) {
      const res = await h.http
        .get(`/api/posts/${body._id}`)
        .set('If-None-Match', sent)
        .set('Cache-Control', 'no-cache')
        .set('Pragma', 'no-cache');
      expect({ sent, status: res.status }).toEqual({ sent, status: 304 });
    }
    expect((await h.http.get(`/api/posts/${body._id}`).set('If-None-Match', '"other"')).status).toBe(200);
  });

  it('when the post changes, then its ETag changes and the old one gets the full body', async () => {
    const [id] = await seed(h.model, [{ authorId: author.id, status: 'draft' }]);
    const before = await h.http.get(`/api/posts/${id}`).set(author.auth);
    await h.http.put(`/api/posts/${id}`).set(author.auth).send({ title: 'Changed title' }).expect(200);

    const after = await h.http
      .get(`/api/posts/${id}`)
      .set(author.auth)
      .set('If-None-Match', before.headers.etag as string);
    expect(after.status).toBe(200);
    expect(after.body.title).toBe('Changed title');
    expect(after.headers.etag).not.toBe(before.headers.etag);
  });

  it('when a list page is read twice, then the second answer is 304; a new post on it gives 200 again', async () => {
    const tag = uniqueTag('etag');
    await seed(h.model, [{ tags: [tag] }]);
    const first = await h.http.get('/api/posts').query({ tag });
    const etag = first.headers.etag as string;

    await h.http.get('/api/posts').query({ tag }).set('If-None-Match', etag).expect(304);
    await seed(h.model, [{ tags: [tag], createdAt: new Date() }]);
    const changed = await h.http.get('/api/posts').query({ tag }).set('If-None-Match', etag);
    expect(changed.status).toBe(200);
    expect(changed.body.total).toBe(2);
  });

  it('when the answer is an error, then no ETag is sent', async () => {
    const res = await h.http.get('/api/posts/0123456789abcdef01234567');

    expect(res.status).toBe(404);
    expect(res.headers.etag).toBeUndefined();
  });
});

describe('Server-Timing on the public reads', () => {
  it('when a list or a post is read, then the answer says how long the database part and the whole request took', async () => {
    const [id] = await seed(h.model, [{ authorId: author.id }]);
    for (const res of [await h.http.get('/api/posts'), await h.http.get(`/api/posts/${id}`)]) {
      const timing = String(res.headers['server-timing']);
      const db = Number(/db;dur=([\d.]+)/.exec(timing)?.[1]);
      const app = Number(/app;dur=([\d.]+)/.exec(timing)?.[1]);

      expect(db).toBeGreaterThan(0);
      expect(app).toBeGreaterThanOrEqual(db);
    }
  });
});
