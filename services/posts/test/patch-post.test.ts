import { postMessages } from '@cs/contract';
import { refusal } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { newAuthor, type PostsHarness, seed, startPosts, uniqueTag } from './helpers';

let h: PostsHarness;
const author = newAuthor();
const stranger = newAuthor();

beforeAll(async () => {
  h = await startPosts(__filename);
});
afterAll(async () => {
  await h.stop();
});

async function draft(tags: string[] = ['before']): Promise<string> {
  const [id] = await seed(h.model, [
    { authorId: author.id, status: 'draft', title: 'Draft', body: 'Draft body text.', tags },
  ]);
  return id as string;
}

const patch = (id: string, body: unknown, auth = author.auth) =>
  h.http
    .patch(`/api/posts/${id}`)
    .set(auth)
    .send(body as object);

/** The post as it is stored: what a failed request must leave as it was. */
const stored = async (id: string) => {
  const post = await h.model.findById(id).lean();
  return { title: post?.title, body: post?.body, status: post?.status, tags: post?.tags };
};

describe('PATCH /api/posts/:id (ours: title, body, status and tags in one write)', () => {
  it('when the title and the tags are sent together, then both are applied and the answer is the post as GET answers it', async () => {
    const id = await draft();
    const res = await patch(id, { title: ' Renamed ', tags: ['Walks', 'coast', 'WALKS'] });

    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ _id: id, title: 'Renamed', body: 'Draft body text.', tags: ['walks', 'coast'] });
    const read = await h.http.get(`/api/posts/${id}`).set(author.auth).expect(200);
    expect(res.body).toEqual(read.body);
    expect(await stored(id)).toEqual({
      title: 'Renamed',
      body: 'Draft body text.',
      status: 'draft',
      tags: ['walks', 'coast'],
    });
  });

  it.each([
    ['a tag with a space', ['two words']],
    ['11 tags', Array.from({ length: 11 }, (_, i) => `t${i}`)],
    ['a string', 'news'],
  ])(
    'when the tags are %s beside a valid title, then 400 with the tag rule and nothing changes, the title neither',
    async (_, tags) => {
      const id = await draft();
      const res = await patch(id, { title: 'Not applied', tags });

      expect(res.status).toBe(400);
      expect(res.body).toEqual(refusal(postMessages.tagsInvalid));
      expect(await stored(id)).toEqual({ title: 'Draft', body: 'Draft body text.', status: 'draft', tags: ['before'] });
    },
  );

  it.each([
    [{ status: 'archived', tags: ['fine'] }, postMessages.invalidStatus],
    [{ title: '  ', tags: ['fine'] }, postMessages.titleRequired],
    [{ body: 'short', tags: ['fine'] }, postMessages.bodyTooShort],
  ])(
    'when %j breaks a rule of PUT, then 400 with PUT’s message and the tags are not applied either',
    async (body, message) => {
      const id = await draft();
      const res = await patch(id, body);

      expect(res.status).toBe(400);
      expect(res.body).toEqual(refusal(message));
      expect(await stored(id)).toEqual({ title: 'Draft', body: 'Draft body text.', status: 'draft', tags: ['before'] });
    },
  );

  it('when nothing it knows is sent ({}, or only unknown fields), then 400 no-supported-fields, as PUT answers', async () => {
    const id = await draft();
    for (const body of [{}, { authorId: stranger.id }, { publishedAt: '2001-01-01T00:00:00.000Z' }]) {
      const res = await patch(id, body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: postMessages.noPatchFields });
    }
  });

  it('when the body also carries authorId, createdAt or publishedAt, then they are ignored and the rest is written', async () => {
    const id = await draft();
    const res = await patch(id, {
      tags: [],
      authorId: stranger.id,
      createdAt: '2001-01-01T00:00:00.000Z',
      publishedAt: '2001-01-01T00:00:00.000Z',
    });

    expect(res.status).toBe(200);
    const post = await h.model.findById(id).lean();
    expect(post?.tags).toEqual([]);
    expect(post?.authorId.toHexString()).toBe(author.id);
    expect(post?.createdAt.getUTCFullYear()).not.toBe(2001);
    expect(post?.publishedAt).toBeNull();
  });

  it('when another user patches the post, then 404 as PUT answers, and nothing changes', async () => {
    const id = await draft();
    const res = await patch(id, { title: 'Hijacked', status: 'published', tags: ['theirs'] }, stranger.auth);

    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'Post not found' });
    expect(await stored(id)).toEqual({ title: 'Draft', body: 'Draft body text.', status: 'draft', tags: ['before'] });
  });

  it('when no post has the id, then 404; when the id is malformed, then 400; without a token, then 401', async () => {
    await patch('0123456789abcdef01234567', { title: 'x' }).expect(404);
    const malformed = await patch('xyz', { title: 'x' });
    expect(malformed.status).toBe(400);
    expect(malformed.body).toEqual({ error: 'Invalid ID format' });
    const id = await draft();
    const anonymous = await h.http.patch(`/api/posts/${id}`).send({ title: 'x' });
    expect(anonymous.status).toBe(401);
  });

  it('when a draft is published with new tags in one request, then the public list by the new tag shows it, with publishedAt set', async () => {
    const tag = uniqueTag('patched');
    const id = await draft();
    const listed = async (t: string) =>
      (await h.http.get('/api/posts').query({ tag: t })).body.posts as { _id: string }[];
    expect(await listed(tag)).toEqual([]);

    const before = Date.now();
    const res = await patch(id, { status: 'published', tags: [tag] });

    expect(res.status).toBe(200);
    expect(Date.parse(res.body.publishedAt)).toBeGreaterThanOrEqual(before - 1000);
    expect((await listed(tag)).map((p) => p._id)).toEqual([id]);
  });
});
