import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { newAuthor, type PostsHarness, startPosts } from './helpers';

let h: PostsHarness;
const author = newAuthor();
const valid = { title: 'Hello world', body: 'A body of at least ten characters.' };

beforeAll(async () => {
  h = await startPosts(__filename);
});
afterAll(async () => {
  await h.stop();
});

describe('POST /api/posts', () => {
  it('when the title and body are valid, then 201 with a draft owned by the caller', async () => {
    const res = await h.http.post('/api/posts').set(author.auth).send(valid);

    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ ...valid, authorId: author.id, status: 'draft', tags: [], publishedAt: null });
    expect(res.body._id).toMatch(/^[0-9a-f]{24}$/);
    expect(Date.parse(res.body.createdAt)).toBeGreaterThan(Date.now() - 60_000);
    expect(await h.model.exists({ _id: res.body._id, authorId: author.id })).not.toBeNull();
  });

  it('when title and body have surrounding spaces, then they are stored trimmed', async () => {
    const res = await h.http
      .post('/api/posts')
      .set(author.auth)
      .send({ title: '  Spaced  ', body: '\n  0123456789  \t' });

    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ title: 'Spaced', body: '0123456789' });
  });

  it.each([
    ['no title', { body: valid.body }, [{ field: 'title', message: 'title is required' }]],
    ['a blank title', { title: '   ', body: valid.body }, [{ field: 'title', message: 'title is required' }]],
    ['no body', { title: 'T' }, [{ field: 'body', message: 'body must be at least 10 characters' }]],
    [
      'a body of 9 characters after trimming',
      { title: 'T', body: '  123456789  ' },
      [{ field: 'body', message: 'body must be at least 10 characters' }],
    ],
    [
      'neither',
      {},
      [
        { field: 'title', message: 'title is required' },
        { field: 'body', message: 'body must be at least 10 characters' },
      ],
    ],
    ['a numeric title', { title: 42, body: valid.body }, [{ field: 'title', message: 'title is required' }]],
    [
      'an operator object as body',
      { title: 'T', body: { $gt: '' } },
      [{ field: 'body', message: 'body must be at least 10 characters' }],
    ],
    [
      'a title over 200 characters',
      { title: 't'.repeat(201), body: valid.body },
      [{ field: 'title', message: 'title must be at most 200 characters' }],
    ],
  ])('when the body has %s, then 400 with the validation entries', async (_case, body, errors) => {
    const before = await h.model.countDocuments({ authorId: author.id });
    const res = await h.http.post('/api/posts').set(author.auth).send(body);

    expect(res.status).toBe(400);
    expect(res.body).toEqual({ errors: expect.arrayContaining(errors) });
    expect(res.body.errors).toHaveLength(errors.length);
    expect(await h.model.countDocuments({ authorId: author.id })).toBe(before);
  });

  it('when the title is 200 emoji (200 characters, 400 UTF-16 units), then 201; at 201 emoji, then 400 {errors}', async () => {
    const ok = await h.http
      .post('/api/posts')
      .set(author.auth)
      .send({ ...valid, title: '😀'.repeat(200) });
    expect(ok.status).toBe(201);
    expect(ok.body.title).toBe('😀'.repeat(200));

    const refused = await h.http
      .post('/api/posts')
      .set(author.auth)
      .send({ ...valid, title: '😀'.repeat(201) });
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({ errors: [{ field: 'title', message: 'title must be at most 200 characters' }] });
  });

  it('when the body is exactly 10 characters after trimming, then 201', async () => {
    const res = await h.http.post('/api/posts').set(author.auth).send({ title: 'T', body: ' 0123456789 ' });

    expect(res.status).toBe(201);
  });

  it('when tags are given with capitals and repeats, then they are lowercased and deduplicated', async () => {
    const res = await h.http
      .post('/api/posts')
      .set(author.auth)
      .send({ ...valid, tags: ['News', 'news', 'tech-2024'] });

    expect(res.status).toBe(201);
    expect(res.body.tags).toEqual(['news', 'tech-2024']);
  });

  it.each([
    ['eleven tags', Array.from({ length: 11 }, (_, i) => `t${i}`)],
    ['a tag with a space', ['two words']],
    ['a 41-character tag', ['a'.repeat(41)]],
    ['a non-string tag', [7]],
    ['tags that are not a list', 'news'],
  ])('when tags are %s, then 400 with a tags entry', async (_case, tags) => {
    const res = await h.http
      .post('/api/posts')
      .set(author.auth)
      .send({ ...valid, tags });

    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([expect.objectContaining({ field: 'tags' })]);
  });

  it('when the body tries to set _id, authorId, status, createdAt or publishedAt, then they are ignored', async () => {
    const forged = '0123456789abcdef01234567';
    const res = await h.http
      .post('/api/posts')
      .set(author.auth)
      .send({
        ...valid,
        _id: forged,
        authorId: forged,
        status: 'published',
        createdAt: '2001-01-01T00:00:00.000Z',
        publishedAt: '2001-01-01T00:00:00.000Z',
        views: 1000,
      });

    expect(res.status).toBe(201);
    expect(res.body._id).not.toBe(forged);
    expect(res.body).toMatchObject({ authorId: author.id, status: 'draft', publishedAt: null });
    expect(res.body.createdAt).not.toBe('2001-01-01T00:00:00.000Z');
    expect(res.body).not.toHaveProperty('views');
    const stored = await h.model.findById(res.body._id).lean();
    expect(stored).not.toHaveProperty('views');
  });

  it('when there is no token, then 401 and nothing is created', async () => {
    const before = await h.model.estimatedDocumentCount();
    const res = await h.http.post('/api/posts').send(valid);

    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'No token provided' });
    expect(await h.model.estimatedDocumentCount()).toBe(before);
  });

  it('when the JSON is malformed, then 400; when it is not JSON, then 415; when too large, then 413', async () => {
    const malformed = await h.http
      .post('/api/posts')
      .set(author.auth)
      .set('Content-Type', 'application/json')
      .send('{"title":');
    expect(malformed.status).toBe(400);
    expect(malformed.body).toEqual({ error: 'Malformed JSON body' });

    const form = await h.http.post('/api/posts').set(author.auth).type('form').send('title=a&body=bbbbbbbbbbbb');
    expect(form.status).toBe(415);
    expect(form.body).toEqual({ error: 'Content-Type must be application/json' });

    const huge = await h.http
      .post('/api/posts')
      .set(author.auth)
      .send({ title: 'T', body: 'x'.repeat(110 * 1024) });
    expect(huge.status).toBe(413);
    expect(huge.body).toEqual({ error: 'Request body too large' });
  });

  it('when the JSON body is an array or a string, then 400', async () => {
    for (const raw of ['[1,2]', '"text"']) {
      const res = await h.http.post('/api/posts').set(author.auth).set('Content-Type', 'application/json').send(raw);
      expect(res.status).toBe(400);
      expect(res.body.error).toEqual(expect.any(String));
    }
  });
});
