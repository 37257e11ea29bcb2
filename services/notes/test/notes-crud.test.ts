import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Types } from 'mongoose';
import { type NotesHarness, newCaller, startNotes } from './helpers';

let h: NotesHarness;
const me = newCaller();
const other = newCaller();

beforeAll(async () => {
  h = await startNotes(__filename);
});
afterAll(async () => {
  await h.close();
});

const create = (caller = me, body: Record<string, unknown> = { title: 'A note' }) =>
  h.http.post('/api/notes').set(caller.auth).send(body);

describe('POST /api/notes', () => {
  it('when the title is given, then 201 with the note, owned by the caller, body defaulting to empty', async () => {
    const res = await create(me, { title: '  Groceries  ' });

    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ title: 'Groceries', body: '', attachmentKey: null, authorId: me.id });
    expect(Object.keys(res.body).sort()).toEqual([
      '_id',
      'attachment',
      'attachmentKey',
      'authorId',
      'body',
      'createdAt',
      'title',
      'updatedAt',
    ]);
  });

  it.each([
    ['no title', { body: 'x' }, 'title'],
    ['a blank title', { title: '  ' }, 'title'],
    ['a 201-character title', { title: 't'.repeat(201) }, 'title'],
    ['a numeric body', { title: 'T', body: 5 }, 'body'],
    ['a body over 100,000 characters', { title: 'T', body: 'b'.repeat(100_001) }, 'body'],
    ['a malformed attachmentKey', { title: 'T', attachmentKey: '../../etc/passwd' }, 'attachmentKey'],
    ['an operator attachmentKey', { title: 'T', attachmentKey: { $ne: null } }, 'attachmentKey'],
  ])('when the body has %s, then 400 with a validation entry and nothing is stored', async (_case, body, field) => {
    const before = await h.notes.countDocuments({ authorId: me.id });
    const res = await create(me, body);

    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([expect.objectContaining({ field })]);
    expect(await h.notes.countDocuments({ authorId: me.id })).toBe(before);
  });

  it('when the body tries to set authorId, _id or createdAt, then they are ignored', async () => {
    const res = await create(me, {
      title: 'Mine',
      authorId: other.id,
      _id: '0123456789abcdef01234567',
      createdAt: '2001-01-01T00:00:00Z',
    });

    expect(res.status).toBe(201);
    expect(res.body.authorId).toBe(me.id);
    expect(res.body._id).not.toBe('0123456789abcdef01234567');
    expect(res.body.createdAt).not.toContain('2001');
  });

  it('when there is no token, then 401', async () => {
    const res = await h.http.post('/api/notes').send({ title: 'x' });

    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'No token provided' });
  });
});

describe('GET /api/notes and GET /api/notes/:id', () => {
  it('when the caller lists notes, then only their own come back, newest first', async () => {
    const caller = newCaller();
    const first = await create(caller, { title: 'first' });
    const second = await create(caller, { title: 'second' });
    await create(other, { title: 'not yours' });

    const res = await h.http.get('/api/notes').set(caller.auth);
    expect(res.status).toBe(200);
    expect(res.body.map((n: { _id: string }) => n._id)).toEqual([second.body._id, first.body._id]);
  });

  it("when the note is the caller's, then 200; another user's or none, then 404", async () => {
    const mine = await create(me, { title: 'read me' });

    expect((await h.http.get(`/api/notes/${mine.body._id}`).set(me.auth)).body.title).toBe('read me');
    for (const res of [
      await h.http.get(`/api/notes/${mine.body._id}`).set(other.auth),
      await h.http.get('/api/notes/0123456789abcdef01234567').set(me.auth),
    ]) {
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'Note not found' });
    }
  });

  it('when the id is malformed, then 400 invalid-ID-format on every :id route', async () => {
    for (const res of [
      await h.http.get('/api/notes/nope').set(me.auth),
      await h.http.put('/api/notes/nope').set(me.auth).send({ title: 'x' }),
      await h.http.delete('/api/notes/nope').set(me.auth),
      await h.http.get('/notes/nope/attachment').set(me.auth),
      await h.http.get('/api/notes/nope/attachment').set(me.auth),
    ]) {
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'Invalid ID format' });
    }
  });
});

describe('PUT /api/notes/:id', () => {
  it('when the owner changes title and body, then 200 with the updated note', async () => {
    const note = await create(me, { title: 'old', body: 'old body' });
    const res = await h.http.put(`/api/notes/${note.body._id}`).set(me.auth).send({ title: ' new ', body: 'new body' });

    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ title: 'new', body: 'new body', authorId: me.id });
  });

  it('when no supported field is present, then 400 with a validation entry', async () => {
    const note = await create(me);
    for (const body of [{}, { authorId: other.id }, { color: 'red' }]) {
      const res = await h.http.put(`/api/notes/${note.body._id}`).set(me.auth).send(body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        errors: [{ field: '', message: 'No supported fields to update (title, body, attachmentKey)' }],
      });
    }
  });

  it('when another user updates the note, then 404 and it is unchanged', async () => {
    const note = await create(me, { title: 'keep' });
    const res = await h.http.put(`/api/notes/${note.body._id}`).set(other.auth).send({ title: 'stolen' });

    expect(res.status).toBe(404);
    expect((await h.notes.findById(note.body._id).lean())?.title).toBe('keep');
  });

  it('when the body also carries authorId, then only the supported fields are written', async () => {
    const note = await create(me);
    await h.http
      .put(`/api/notes/${note.body._id}`)
      .set(me.auth)
      .send({ title: 'renamed', authorId: other.id })
      .expect(200);

    expect((await h.notes.findById(note.body._id).lean())?.authorId.toHexString()).toBe(me.id);
  });
});

describe('DELETE /api/notes/:id', () => {
  it('when the owner deletes the note, then 204 and it is gone; again (a resent DELETE), then 204 as the first time', async () => {
    const note = await create(me);
    const res = await h.http.delete(`/api/notes/${note.body._id}`).set(me.auth);

    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect(await h.notes.exists({ _id: note.body._id })).toBeNull();
    const again = await h.http.delete(`/api/notes/${note.body._id}`).set(me.auth);
    expect(again.status).toBe(204);
    expect(again.text).toBe('');
  });

  it('when another user deletes the note, then 204, as for a note that does not exist, and it stays', async () => {
    const note = await create(me);
    const res = await h.http.delete(`/api/notes/${note.body._id}`).set(other.auth);
    const none = await h.http.delete(`/api/notes/${new Types.ObjectId()}`).set(other.auth);

    expect(res.status).toBe(204);
    expect(none.status).toBe(204);
    expect(await h.notes.exists({ _id: note.body._id })).not.toBeNull();
  });
});
