import { setTimeout as sleep } from 'node:timers/promises';
import { postMessages } from '@cs/contract';
import { refusal } from '@cs/testkit';
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

async function draft(): Promise<string> {
  const [id] = await seed(h.model, [
    { authorId: author.id, status: 'draft', title: 'Draft', body: 'Draft body text.' },
  ]);
  return id as string;
}

describe('PUT /api/posts/:id', () => {
  it('when the author changes the title and body, then 200 with the updated post', async () => {
    const id = await draft();
    const res = await h.http
      .put(`/api/posts/${id}`)
      .set(author.auth)
      .send({ title: ' New title ', body: 'A brand new body.' });

    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ _id: id, title: 'New title', body: 'A brand new body.', status: 'draft' });
    expect(Date.parse(res.body.updatedAt)).toBeGreaterThan(Date.parse(res.body.createdAt));
  });

  it('when a draft is set to published, then publishedAt is set to now; back to draft keeps it', async () => {
    const id = await draft();
    const before = Date.now();
    const published = await h.http.put(`/api/posts/${id}`).set(author.auth).send({ status: 'published' });

    expect(published.status).toBe(200);
    expect(published.body.status).toBe('published');
    expect(Date.parse(published.body.publishedAt)).toBeGreaterThanOrEqual(before - 1000);

    const unpublished = await h.http.put(`/api/posts/${id}`).set(author.auth).send({ status: 'draft' });
    expect(unpublished.status).toBe(200);
    expect(unpublished.body.status).toBe('draft');
    expect(unpublished.body.publishedAt).toBe(published.body.publishedAt);
  });

  it('when a published post is published again, then publishedAt does not move', async () => {
    const id = await draft();
    const first = await h.http.put(`/api/posts/${id}`).set(author.auth).send({ status: 'published' });
    await sleep(20);
    const again = await h.http.put(`/api/posts/${id}`).set(author.auth).send({ status: 'published', title: 'Renamed' });

    expect(again.status).toBe(200);
    expect(again.body.title).toBe('Renamed');
    expect(again.body.publishedAt).toBe(first.body.publishedAt);
  });

  it('when published, then it appears in the public list; unpublished, then it leaves it', async () => {
    const id = await draft();
    const tagged = await h.model.updateOne({ _id: id }, { $set: { tags: ['transition-check'] } });
    expect(tagged.modifiedCount).toBe(1);
    const listed = async () => (await h.http.get('/api/posts').query({ tag: 'transition-check' })).body.total;

    expect(await listed()).toBe(0);
    await h.http.put(`/api/posts/${id}`).set(author.auth).send({ status: 'published' }).expect(200);
    expect(await listed()).toBe(1);
    await h.http.put(`/api/posts/${id}`).set(author.auth).send({ status: 'draft' }).expect(200);
    expect(await listed()).toBe(0);
  });

  it('when none of title, body and status is present, then 400 no-supported-fields', async () => {
    const id = await draft();
    for (const body of [{}, { tags: ['x'] }, { authorId: stranger.id }]) {
      const res = await h.http.put(`/api/posts/${id}`).set(author.auth).send(body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'No supported fields to update (title, body, status)' });
    }
  });

  it.each(['archived', 'PUBLISHED', '', null, 1, { $ne: 'draft' }])(
    'when status is %j, then 400 invalid-status',
    async (status) => {
      const id = await draft();
      const res = await h.http.put(`/api/posts/${id}`).set(author.auth).send({ status });

      expect(res.status).toBe(400);
      expect(res.body).toEqual(refusal('Invalid status: must be draft or published'));
    },
  );

  it.each([
    [{ title: '  ' }, 'title is required'],
    [{ title: 5 }, 'title must be a string'],
    [{ body: 'short' }, 'body must be at least 10 characters'],
    [{ body: { $set: 'x' } }, 'body must be a string'],
  ])('when the change %j breaks a rule, then 400 and the post is unchanged', async (body, message) => {
    const id = await draft();
    const res = await h.http.put(`/api/posts/${id}`).set(author.auth).send(body);

    expect(res.status).toBe(400);
    expect(res.body).toEqual(refusal(message));
    expect(await h.model.findById(id).lean()).toMatchObject({ title: 'Draft', body: 'Draft body text.' });
  });

  it('when the title is 200 emoji (200 characters, as the create route counts them), then 200; at 201, then 400', async () => {
    const id = await draft();
    const ok = await h.http
      .put(`/api/posts/${id}`)
      .set(author.auth)
      .send({ title: '😀'.repeat(200) });
    expect(ok.status).toBe(200);
    expect(ok.body.title).toBe('😀'.repeat(200));

    const refused = await h.http
      .put(`/api/posts/${id}`)
      .set(author.auth)
      .send({ title: '😀'.repeat(201) });
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual(refusal('title must be at most 200 characters'));
  });

  it('when another user updates the post, then 404 and nothing changes', async () => {
    const id = await draft();
    const res = await h.http
      .put(`/api/posts/${id}`)
      .set(stranger.auth)
      .send({ title: 'Hijacked', status: 'published' });

    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'Post not found' });
    expect(await h.model.findById(id).lean()).toMatchObject({ title: 'Draft', status: 'draft' });
  });

  it('when no post has the id, then 404', async () => {
    const res = await h.http.put('/api/posts/0123456789abcdef01234567').set(author.auth).send({ title: 'x' });

    expect(res.status).toBe(404);
  });

  it('when the body also carries authorId, _id, createdAt, publishedAt or tags, then only title/body/status are written', async () => {
    const id = await draft();
    const original = await h.model.findById(id).lean();
    const res = await h.http
      .put(`/api/posts/${id}`)
      .set(author.auth)
      .send({
        title: 'Kept',
        authorId: stranger.id,
        _id: '0123456789abcdef01234567',
        createdAt: '2001-01-01T00:00:00.000Z',
        publishedAt: '2001-01-01T00:00:00.000Z',
        tags: ['injected'],
      });

    expect(res.status).toBe(200);
    const stored = await h.model.findById(id).lean();
    expect(stored?.title).toBe('Kept');
    expect(stored?.authorId.toHexString()).toBe(author.id);
    expect(stored?.createdAt.toISOString()).toBe(original?.createdAt.toISOString());
    expect(stored?.publishedAt).toBeNull();
    expect(stored?.tags).toEqual([]);
  });

  it('when the id is malformed, then 400 invalid-ID-format before any lookup', async () => {
    const res = await h.http.put('/api/posts/xyz').set(author.auth).send({ title: 'x' });

    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'Invalid ID format' });
  });

  it('when there is no token, then 401', async () => {
    const id = await draft();
    const res = await h.http.put(`/api/posts/${id}`).send({ title: 'x' });

    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'No token provided' });
  });
});

describe('PUT /api/posts/:id/tags (ours; the contract’s PUT ignores tags)', () => {
  const setTags = (id: string, body: unknown, auth = author.auth) =>
    h.http
      .put(`/api/posts/${id}/tags`)
      .set(auth)
      .send(body as object);
  const listed = async (tag: string) => (await h.http.get('/api/posts').query({ tag })).body.total as number;

  it('replaces every tag, lowercased and once each; the lists by tag follow at once, never stale', async () => {
    const id = await draft();
    await h.http.put(`/api/posts/${id}`).set(author.auth).send({ status: 'published' }).expect(200);
    await setTags(id, { tags: ['Retag-Old'] }).expect(200);
    expect(await listed('retag-old')).toBe(1);

    const res = await setTags(id, { tags: ['retag-new', 'RETAG-NEW', 'retag-two'] }).expect(200);
    expect(res.body).toMatchObject({ _id: id, tags: ['retag-new', 'retag-two'], status: 'published' });
    expect(await listed('retag-old')).toBe(0);
    expect(await listed('retag-new')).toBe(1);
    await setTags(id, { tags: [] }).expect(200);
    expect(await listed('retag-new')).toBe(0);
  });

  it.each([
    ['no tags field', {}],
    ['a tag with a space', { tags: ['two words'] }],
    ['11 tags', { tags: Array.from({ length: 11 }, (_, i) => `t${i}`) }],
    ['a string', { tags: 'news' }],
  ])('%s is 400 with the tag rule, and nothing changes', async (_, body) => {
    const id = await draft();
    const res = await setTags(id, body).expect(400);
    expect(res.body).toEqual({ errors: [{ field: 'tags', message: postMessages.tagsInvalid }] });
    expect((await h.http.get(`/api/posts/${id}`).set(author.auth)).body.tags).toEqual([]);
  });

  it('another user’s post is 404, and keeps its tags; no token is 401', async () => {
    const id = await draft();
    await setTags(id, { tags: ['mine'] }, stranger.auth).expect(404);
    expect((await h.http.get(`/api/posts/${id}`).set(author.auth)).body.tags).toEqual([]);
    await h.http
      .put(`/api/posts/${id}/tags`)
      .send({ tags: ['x'] })
      .expect(401);
  });
});
