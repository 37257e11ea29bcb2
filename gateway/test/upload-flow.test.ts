import type { RunningSystem } from '@cs/devstack';
import { ObjectStorage } from '@cs/storage';
import { api, eventually, startTestSystem, testStorageSettings } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

let system: RunningSystem;
let http: ReturnType<typeof api>;
const bucket = new ObjectStorage(testStorageSettings());

beforeAll(async () => {
  system = await startTestSystem({ env: { AUTH_RATE_LIMIT: '0' } });
  http = api(system.gatewayUrl);
}, 60_000);
afterAll(async () => {
  bucket.destroy();
  await system?.stop();
});

async function newUser(): Promise<{ Authorization: string }> {
  const email = `flow-${Date.now()}-${Math.random().toString(16).slice(2)}@example.com`;
  const res = await http.post('/api/auth/register').send({ email, password: 'password-123' });
  return { Authorization: `Bearer ${res.body.token}` };
}

describe('a file attached to a note, as a client does it through the gateway', () => {
  it('when the client uploads straight to storage and attaches the key, then the download gives the same bytes, and deleting the note removes the object', async () => {
    const auth = await newUser();
    const bytes = Buffer.from(`%PDF-1.4 not really a pdf ${Date.now()}\n\u0000\u00ff`, 'latin1');

    const link = await http
      .post('/upload-url')
      .set(auth)
      .send({ contentType: 'application/pdf', filename: 'Report.final.PDF', size: bytes.length });
    expect(link.status).toBe(200);
    expect(link.body.key).toMatch(/^uploads\/[0-9a-f-]{36}\.pdf$/);
    // An uploader may store a caching header of its own with the object (it is not signed).
    const put = await fetch(link.body.url, {
      method: 'PUT',
      headers: { ...link.body.headers, 'Cache-Control': 'public, max-age=31536000' },
      body: bytes,
    });
    expect(put.status).toBe(200);
    expect((await bucket.headObject(link.body.key))?.cacheControl).toBe('public, max-age=31536000');

    const note = await http
      .post('/api/notes')
      .set(auth)
      .send({ title: 'Quarterly report', attachmentKey: link.body.key });
    expect(note.status).toBe(201);
    // The note says what the key holds, as it was uploaded.
    expect(note.body.attachment).toEqual({
      filename: 'Report.final.PDF',
      size: bytes.length,
      contentType: 'application/pdf',
    });

    const download = await http.get(`/notes/${note.body._id}/attachment`).set(auth);
    expect(download.status).toBe(200);
    expect(download.body.expiresIn).toBe(3600);
    const got = await fetch(download.body.url);
    expect(got.headers.get('content-type')).toBe('application/pdf');
    // Saved, not rendered on storage's origin, under the name it was uploaded with.
    expect(got.headers.get('content-disposition')).toBe(
      `attachment; filename="Report.final.PDF"; filename*=UTF-8''Report.final.PDF`,
    );
    // The link's own caching rule wins over the stored one: a private file in no shared cache.
    expect(got.headers.get('cache-control')).toBe('private, no-store');
    expect(Buffer.from(await got.arrayBuffer()).equals(bytes)).toBe(true);
    // Every JSON answer of this flow was one person's: none may be stored by a cache.
    for (const answer of [link, note, download]) expect(answer.headers['cache-control']).toBe('no-store');

    // The file removed from the note: the note no longer names it, and its object goes.
    const removed = await http.put(`/api/notes/${note.body._id}`).set(auth).send({ attachmentKey: null }).expect(200);
    expect(removed.body).toMatchObject({ attachmentKey: null, attachment: null });
    await http.delete(`/api/notes/${note.body._id}`).set(auth).expect(204);
    await eventually(
      "the deleted note's object removed from storage",
      () => bucket.headObject(link.body.key),
      (head) => head === undefined,
    );
  });

  it("when another user tries to attach or download someone's file, then they are refused and learn nothing", async () => {
    const owner = await newUser();
    const thief = await newUser();
    const link = await http
      .post('/api/upload-url')
      .set(owner)
      .send({ contentType: 'text/plain', filename: 'secret.txt', size: 'the secret'.length });
    await fetch(link.body.url, { method: 'PUT', headers: link.body.headers, body: 'the secret' });
    const note = await http.post('/api/notes').set(owner).send({ title: 'mine', attachmentKey: link.body.key });
    expect(note.status).toBe(201);

    const attach = await http.post('/api/notes').set(thief).send({ title: 'stolen', attachmentKey: link.body.key });
    expect(attach.status).toBe(400);
    const download = await http.get(`/api/notes/${note.body._id}/attachment`).set(thief);
    expect(download.status).toBe(404);
    expect(download.text).not.toContain('X-Amz');
  });
});
