import { setTimeout as sleep } from 'node:timers/promises';
import { eventually } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { FILES_RETRY_WINDOW_MS, type NotesHarness, newCaller, startNotes, upload } from './helpers';

let h: NotesHarness;
const me = newCaller();
const other = newCaller();

beforeAll(async () => {
  h = await startNotes(__filename);
});
afterAll(async () => {
  await h.close();
});

const gone = (key: string) => async () => (await h.bucket.headObject(key)) === undefined;

/** The release outbox's poll, as the service runs it (service.ts), for as long as `until` takes. */
async function polling<T>(until: () => Promise<T>): Promise<T> {
  const stop = h.outbox.start(50);
  try {
    return await until();
  } finally {
    await stop();
  }
}

describe('attaching an uploaded file to a note', () => {
  it('when the key was uploaded by the caller, then the note holds it and a GET on its link returns the exact bytes', async () => {
    const bytes = new Uint8Array([1, 2, 3, 0, 255, 128, 42]);
    const key = await upload(h, me, bytes);
    const note = await h.http.post('/api/notes').set(me.auth).send({ title: 'with file', attachmentKey: key });
    expect(note.status).toBe(201);
    expect(note.body.attachmentKey).toBe(key);

    for (const path of [`/notes/${note.body._id}/attachment`, `/api/notes/${note.body._id}/attachment`]) {
      const res = await h.http.get(path).set(me.auth);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ url: expect.any(String), expiresIn: 3600 });
      const download = await fetch(res.body.url);
      expect(new Uint8Array(await download.arrayBuffer())).toEqual(bytes);
    }
  });

  it("when the key is another user's, then 400 and no note is created", async () => {
    const key = await upload(h, other);
    const res = await h.http.post('/api/notes').set(me.auth).send({ title: 'steal', attachmentKey: key });

    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/^attachmentKey cannot be attached/);
    expect(await h.notes.exists({ attachmentKey: key })).toBeNull();
  });

  it('when the key was issued but the file never uploaded, then 400', async () => {
    const key = await upload(h, me, 'never sent', { put: false });
    const res = await h.http.post('/api/notes').set(me.auth).send({ title: 'empty', attachmentKey: key });

    expect(res.status).toBe(400);
    expect(res.body.error).toContain('not been uploaded');
  });

  it('when the title is 200 emoji (200 characters, 400 UTF-16 units), then the note is created and holds its key; at 201, then 400 {errors} and the key is still free to attach', async () => {
    const fits = await upload(h, me);
    const ok = await h.http
      .post('/api/notes')
      .set(me.auth)
      .send({ title: '😀'.repeat(200), attachmentKey: fits });
    expect(ok.status).toBe(201);
    expect(ok.body).toMatchObject({ title: '😀'.repeat(200), attachmentKey: fits });

    const tooLong = await upload(h, me);
    const refused = await h.http
      .post('/api/notes')
      .set(me.auth)
      .send({ title: '😀'.repeat(201), attachmentKey: tooLong });
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({ errors: [{ field: 'title', message: expect.any(String) }] });
    // Nothing was claimed: the same key attaches to a valid note.
    const later = await h.http.post('/api/notes').set(me.auth).send({ title: 'valid', attachmentKey: tooLong });
    expect(later.status).toBe(201);
  });

  it('when an update sets a 200-emoji title with a new key, then 200 and the note holds the key', async () => {
    const note = await h.http.post('/api/notes').set(me.auth).send({ title: 'short' }).expect(201);
    const key = await upload(h, me);
    const res = await h.http
      .put(`/api/notes/${note.body._id}`)
      .set(me.auth)
      .send({ title: '😀'.repeat(200), attachmentKey: key });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ title: '😀'.repeat(200), attachmentKey: key });
  });

  it('when the same key is attached to a second note, then 400', async () => {
    const key = await upload(h, me);
    await h.http.post('/api/notes').set(me.auth).send({ title: 'one', attachmentKey: key }).expect(201);

    const res = await h.http.post('/api/notes').set(me.auth).send({ title: 'two', attachmentKey: key });
    expect(res.status).toBe(400);
  });

  it("when another user asks for the note's attachment, or the note has none, then 404", async () => {
    const key = await upload(h, me);
    const withFile = await h.http.post('/api/notes').set(me.auth).send({ title: 'private', attachmentKey: key });
    const without = await h.http.post('/api/notes').set(me.auth).send({ title: 'plain' });

    const stranger = await h.http.get(`/notes/${withFile.body._id}/attachment`).set(other.auth);
    expect(stranger.status).toBe(404);
    expect(stranger.body).toEqual({ error: 'Note not found' });
    const none = await h.http.get(`/notes/${without.body._id}/attachment`).set(me.auth);
    expect(none.status).toBe(404);
    expect(none.body).toEqual({ error: 'Note has no attachment' });
  });

  it('when the attachment is replaced, then the old object is released; set to null, then the new one too', async () => {
    const first = await upload(h, me, 'first');
    const second = await upload(h, me, 'second');
    const note = await h.http.post('/api/notes').set(me.auth).send({ title: 'swap', attachmentKey: first });

    const replaced = await h.http.put(`/api/notes/${note.body._id}`).set(me.auth).send({ attachmentKey: second });
    expect(replaced.status).toBe(200);
    expect(replaced.body.attachmentKey).toBe(second);
    await eventually('the replaced object removed from storage', gone(first));
    expect(await h.bucket.headObject(second)).toBeDefined();

    const removed = await h.http.put(`/api/notes/${note.body._id}`).set(me.auth).send({ attachmentKey: null });
    expect(removed.body.attachmentKey).toBeNull();
    await eventually('the detached object removed from storage', gone(second));
  });

  it('when the note is updated without touching its key, then the object stays', async () => {
    const key = await upload(h, me);
    const note = await h.http.post('/api/notes').set(me.auth).send({ title: 'keep', attachmentKey: key });
    await h.http
      .put(`/api/notes/${note.body._id}`)
      .set(me.auth)
      .send({ title: 'kept', attachmentKey: key })
      .expect(200);
    // The outbox's poll, as the service runs it, until nothing is owed to files for the key.
    await polling(() =>
      eventually(
        'nothing owed for the kept key',
        () => h.pending.exists({ key }),
        (owed) => !owed,
      ),
    );

    expect(await h.bucket.headObject(key)).toBeDefined();
  });

  it('when the note is deleted, then its object is removed from storage', async () => {
    const key = await upload(h, me);
    const note = await h.http.post('/api/notes').set(me.auth).send({ title: 'bye', attachmentKey: key });

    await h.http.delete(`/api/notes/${note.body._id}`).set(me.auth).expect(204);
    await eventually("the deleted note's object removed from storage", gone(key));
    await eventually(
      'its release gone from the outbox',
      () => h.pending.countDocuments({ key }),
      (left) => left === 0,
    );
  });
});

describe('when the files service restarts', () => {
  it('then an attachment sent while it is away is claimed once it is back, within the retry window', async () => {
    const key = await upload(h, me);
    await h.files.stop();
    let restarted = false;
    try {
      const attach = h.http
        .post('/api/notes')
        .set(me.auth)
        .send({ title: 'sent during a restart', attachmentKey: key });
      const sent = attach.then((res) => res); // supertest sends on then()
      await sleep(300);
      await h.files.start();
      restarted = true;
      const res = await sent;
      expect(res.status).toBe(201);
      expect(res.body.attachmentKey).toBe(key);
    } finally {
      if (!restarted) await h.files.start();
    }
  });
});

describe('when the files service is down', () => {
  it('then deleting a note still answers 204 at once, and the object is removed once files is back; an attachment answers 503 after the retry window, and the next at once', async () => {
    const key = await upload(h, me);
    const note = await h.http.post('/api/notes').set(me.auth).send({ title: 'outbox', attachmentKey: key });
    await h.files.stop();
    try {
      await h.http.delete(`/api/notes/${note.body._id}`).set(me.auth).expect(204);
      expect(await h.notes.exists({ _id: note.body._id })).toBeNull();
      await eventually(
        'a failed try at releasing the object',
        async () => (await h.pending.findOne({ key }).lean())?.attempts ?? 0,
        (attempts) => attempts >= 1,
      );
      expect(await h.bucket.headObject(key)).toBeDefined();
      expect(await h.pending.countDocuments({ key })).toBe(1);

      // Notes without attachments keep working, and attachment operations answer 503.
      const plain = await h.http.post('/api/notes').set(me.auth).send({ title: 'still works' });
      expect(plain.status).toBe(201);
      expect((await h.http.get('/api/notes').set(me.auth)).status).toBe(200);
      let started = Date.now();
      const attach = await h.http.post('/api/notes').set(me.auth).send({ title: 'x', attachmentKey: key });
      expect(attach.status).toBe(503);
      expect(attach.body).toEqual({ error: 'File service unavailable' });
      expect(Date.now() - started).toBeGreaterThanOrEqual(FILES_RETRY_WINDOW_MS - 500);
      started = Date.now();
      const again = await h.http.post('/api/notes').set(me.auth).send({ title: 'x', attachmentKey: key });
      expect(again.status).toBe(503);
      expect(Date.now() - started).toBeLessThan(1000);
    } finally {
      await h.files.start();
    }

    await h.pending.updateMany({ key }, { $set: { dueAt: new Date() } });
    await polling(() =>
      eventually(
        'the release done',
        () => h.pending.exists({ key }),
        (owed) => !owed,
      ),
    );
    expect(await h.bucket.headObject(key)).toBeUndefined();
    expect(await h.pending.countDocuments({ key })).toBe(0);
  });

  it('then the attachment link answers 503 with a JSON error', async () => {
    const key = await upload(h, me);
    const note = await h.http.post('/api/notes').set(me.auth).send({ title: 'link', attachmentKey: key });
    await h.files.stop();
    try {
      const res = await h.http.get(`/notes/${note.body._id}/attachment`).set(me.auth);
      expect(res.status).toBe(503);
      expect(res.body).toEqual({ error: 'File service unavailable' });
    } finally {
      await h.files.start();
    }
  });
});
