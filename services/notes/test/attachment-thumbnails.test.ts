import { eventually } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import sharp from 'sharp';
import { type NotesHarness, newCaller, startNotes } from './helpers';
import { noteWith } from './note-with-file';

let h: NotesHarness;
const me = newCaller();

beforeAll(async () => {
  h = await startNotes(__filename);
});
afterAll(async () => {
  await h.close();
});

const photo = () =>
  sharp({ create: { width: 640, height: 480, channels: 3, background: '#c04020' } })
    .jpeg()
    .toBuffer();
const thumbnailsOf = async (key: string) => (await h.bucket.listObjects(`thumbs/${key}/`)).objects.map((o) => o.key);

describe('GET /api/notes/:id/attachment?thumb=', () => {
  it('when a size allowed is asked for, on either path, then a link to a thumbnail of that size', async () => {
    const { id, key } = await noteWith(h, me, await photo(), 'image/jpeg', 'photo.jpg');
    for (const path of [`/notes/${id}/attachment`, `/api/notes/${id}/attachment`]) {
      const res = await h.http.get(path).query({ thumb: '100x100' }).set(me.auth);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ url: expect.any(String), expiresIn: 3600 });
      const meta = await sharp(Buffer.from(await (await fetch(res.body.url)).arrayBuffer())).metadata();
      expect({ width: meta.width, height: meta.height, format: meta.format }).toEqual({
        width: 100,
        height: 100,
        format: 'jpeg',
      });
    }
    expect(await thumbnailsOf(key)).toEqual([`thumbs/${key}/100x100`]);
  });

  it('when thumb is empty, then the original’s link, exactly as without it', async () => {
    const bytes = await photo();
    const { id, key } = await noteWith(h, me, bytes, 'image/jpeg', 'photo.jpg');
    const res = await h.http.get(`/api/notes/${id}/attachment?thumb=`).set(me.auth);
    expect(res.status).toBe(200);
    expect(Buffer.from(await (await fetch(res.body.url)).arrayBuffer()).equals(bytes)).toBe(true);
    expect(await thumbnailsOf(key)).toEqual([]);
  });

  it('when the size is not allowed, then 400 with the files service’s message naming the sizes allowed', async () => {
    const { id } = await noteWith(h, me, await photo(), 'image/jpeg', 'photo.jpg');
    const res = await h.http.get(`/api/notes/${id}/attachment?thumb=64x64`).set(me.auth);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'thumb must be one of: 100x100, 300x0, 800x0' });
  });

  it('when the attachment is not an image, then 400', async () => {
    const { id } = await noteWith(h, me, 'plain words', 'text/plain', 'words.txt');
    const res = await h.http.get(`/api/notes/${id}/attachment?thumb=100x100`).set(me.auth);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/^Thumbnails are made only of images/);
  });

  it('when the image is corrupt, then 422 with the files service’s message', async () => {
    const corrupt = Buffer.concat([(await photo()).subarray(0, 300), Buffer.alloc(300, 1)]);
    const { id } = await noteWith(h, me, corrupt, 'image/jpeg', 'broken.jpg');
    const res = await h.http.get(`/api/notes/${id}/attachment?thumb=100x100`).set(me.auth);
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ error: 'The image cannot be read (corrupt or truncated); no thumbnail is made of it' });
  });

  it('when the note is another user’s, then 404 and nothing is made', async () => {
    const { id, key } = await noteWith(h, me, await photo(), 'image/jpeg', 'photo.jpg');
    const res = await h.http.get(`/api/notes/${id}/attachment?thumb=100x100`).set(newCaller().auth);
    expect(res.status).toBe(404);
    expect(await thumbnailsOf(key)).toEqual([]);
  });

  it('when the note is deleted, then its attachment and its thumbnails go together', async () => {
    const { id, key } = await noteWith(h, me, await photo(), 'image/jpeg', 'photo.jpg');
    for (const thumb of ['100x100', '300x0']) {
      await h.http.get(`/api/notes/${id}/attachment`).query({ thumb }).set(me.auth).expect(200);
    }
    expect(await thumbnailsOf(key)).toHaveLength(2);

    await h.http.delete(`/api/notes/${id}`).set(me.auth).expect(204);

    const stop = h.outbox.start(50);
    try {
      await eventually('the original gone', async () => (await h.bucket.headObject(key)) === undefined);
      await eventually('its thumbnails gone', async () => (await thumbnailsOf(key)).length === 0);
    } finally {
      await stop();
    }
  });
});
