import { setTimeout as sleep } from 'node:timers/promises';
import { deletedCaller, startPassThrough, tellDeleted, testStorageSettings } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type Caller, type FilesHarness, newCaller, startFiles, uploadFile } from './helpers';

let h: FilesHarness;

beforeAll(async () => {
  h = await startFiles(__filename);
});
afterAll(async () => {
  await h.close();
});

const deleteAccount = (caller: Caller, on = h) => tellDeleted(on.http, caller);
const claim = (caller: Caller, key: string, on = h) =>
  on.http.post('/internal/uploads/claim').set(caller.auth).send({ key });
const recordsOf = (caller: Caller) => h.model.countDocuments({ ownerId: caller.id });
const openUploadsAt = async (key: string) =>
  (await h.bucket.listMultipartUploads(key)).filter((upload) => upload.key === key).length;
const listedKeys = async () => (await h.bucket.listObjects('uploads/')).objects.map((o) => o.key);

/** An uploaded file, claimed: an attached record and its object. */
async function attached(caller: Caller, bytes = 'attached'): Promise<string> {
  const key = await uploadFile(h, caller, bytes);
  await claim(caller, key).expect(200);
  return key;
}

/** A 10-byte file in one part: created, its part sent unless `send` is false, completed when asked. */
async function multipart(caller: Caller, { send = true, complete = false } = {}) {
  const created = await h.http
    .post('/multipart-uploads')
    .set(caller.auth)
    .send({ contentType: 'application/zip', filename: 'big.zip', size: 10 });
  expect(created.status).toBe(201);
  const { uploadId, key } = created.body as { uploadId: string; key: string };
  if (send) {
    const signed = await h.http
      .post(`/multipart-uploads/${uploadId}/part-urls`)
      .set(caller.auth)
      .send({ partNumbers: [1] });
    const [part] = signed.body.parts as { url: string; headers: Record<string, string> }[];
    const sent = await fetch(part?.url ?? '', { method: 'PUT', headers: part?.headers, body: '0123456789' });
    expect(sent.status).toBe(200);
  }
  if (complete) await h.http.post(`/multipart-uploads/${uploadId}/complete`).set(caller.auth).expect(200);
  return { uploadId, key };
}

describe('POST /internal/users/deleted', () => {
  it("when called with the deleted user's token, then 204, a tombstone is recorded, every record of theirs in any state is gone with its object, their multipart uploads are aborted in storage, and another user's stay", async () => {
    const gone = newCaller();
    const kept = newCaller();
    const attachedKey = await attached(gone);
    const releasedKey = await attached(gone, 'released');
    await h.http.post('/internal/uploads/release').set(gone.auth).send({ key: releasedKey }).expect(204);
    const releasingKey = await attached(gone, 'releasing');
    // A release in flight, its holder's lease still running.
    await h.model.updateOne(
      { key: releasingKey },
      { $set: { state: 'releasing', lockedUntil: new Date(Date.now() + 60_000) } },
    );
    const empty = await multipart(gone, { send: false });
    const open = await multipart(gone);
    const completed = await multipart(gone, { complete: true });
    const keptKey = await attached(kept, 'kept');
    const keptOpen = await multipart(kept);
    const goneKeys = [attachedKey, releasedKey, releasingKey, empty.key, open.key, completed.key];
    expect(await recordsOf(gone)).toBe(goneKeys.length);
    expect([await openUploadsAt(open.key), (await h.bucket.headObject(completed.key))?.size]).toEqual([1, 10]);

    const res = await deleteAccount(gone);
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect(await h.accounts.isDeleted(gone.id)).toBe(true);
    expect(await h.accounts.isDeleted(kept.id)).toBe(false);
    expect(await recordsOf(gone)).toBe(0);
    for (const key of goneKeys) {
      expect([key, await h.bucket.headObject(key), await openUploadsAt(key)]).toEqual([key, undefined, 0]);
    }
    const listed = await listedKeys();
    expect(goneKeys.filter((key) => listed.includes(key))).toEqual([]);

    expect(listed).toContain(keptKey);
    expect((await h.model.findOne({ key: keptKey }).lean())?.state).toBe('attached');
    expect(await openUploadsAt(keptOpen.key)).toBe(1);
    expect((await h.model.findOne({ key: keptOpen.key }).lean())?.state).toBe('issued');
  });

  it('when called again, then 204 and nothing changes', async () => {
    const gone = newCaller();
    const kept = newCaller();
    await attached(gone);
    const keptKey = await attached(kept);
    await deleteAccount(gone).expect(204);
    const total = await h.model.countDocuments();

    expect((await deleteAccount(gone)).status).toBe(204);
    expect(await h.model.countDocuments()).toBe(total);
    expect(await h.bucket.headObject(keptKey)).toBeDefined();
  });

  it('when there is no token, then 401 and nothing is deleted', async () => {
    const caller = newCaller();
    const key = await attached(caller);

    expect((await h.http.post('/internal/users/deleted')).status).toBe(401);
    expect(await recordsOf(caller)).toBe(1);
    expect(await h.bucket.headObject(key)).toBeDefined();
  });

  it('when an object of theirs was put through a link and never claimed, then it has no record and stays: the sweeper deletes it once the claim TTL and its margin have passed', async () => {
    const strict = await startFiles(__filename, { UPLOAD_CLAIM_TTL: '1s' }, h.db);
    try {
      const caller = newCaller();
      const key = await uploadFile(strict, caller, 'never claimed');
      await deleteAccount(caller, strict).expect(204);
      expect(await strict.bucket.headObject(key)).toBeDefined();

      await sleep(2200);
      await strict.sweeper.sweepUnclaimed();
      expect(await strict.bucket.headObject(key)).toBeUndefined();
    } finally {
      await strict.close();
    }
  });
});

const invalidToken = { error: 'Invalid or expired token' };

describe("a deleted account's token, still valid", () => {
  it('when it asks for an upload link, on either path, or creates a multipart upload, then 401 invalid-or-expired-token and nothing is written', async () => {
    const caller = await deletedCaller(h.http);
    const file = { contentType: 'text/plain', filename: 'after.txt', size: 5 };
    const records = await h.model.countDocuments();
    const open = (await h.bucket.listMultipartUploads('uploads/')).length;

    for (const path of ['/upload-url', '/api/upload-url', '/multipart-uploads', '/api/multipart-uploads']) {
      const res = await h.http.post(path).set(caller.auth).send(file);
      expect([path, res.status, res.body]).toEqual([path, 401, invalidToken]);
    }
    expect(await h.model.countDocuments()).toBe(records);
    expect((await h.bucket.listMultipartUploads('uploads/')).length).toBe(open);
  });

  it('when it asks for part links or completes a multipart upload begun before the deletion, then 401, not the 404 of a purged upload', async () => {
    const caller = newCaller();
    const { uploadId } = await multipart(caller);
    await deleteAccount(caller).expect(204);
    const records = await h.model.countDocuments();

    const parts = await h.http
      .post(`/multipart-uploads/${uploadId}/part-urls`)
      .set(caller.auth)
      .send({ partNumbers: [1] });
    const completion = await h.http.post(`/api/multipart-uploads/${uploadId}/complete`).set(caller.auth);
    expect([parts.status, parts.body, completion.status, completion.body]).toEqual([
      401,
      invalidToken,
      401,
      invalidToken,
    ]);
    expect(await h.model.countDocuments()).toBe(records);
  });

  it('when it claims an object it put through a link issued before the deletion, then 401 and no record is written', async () => {
    const caller = newCaller();
    const key = await uploadFile(h, caller, 'put before');
    await deleteAccount(caller).expect(204);

    const res = await claim(caller, key);
    expect([res.status, res.body]).toEqual([401, invalidToken]);
    expect(await h.model.findOne({ key }).lean()).toBeNull();
  });

  it('when it reads or deletes, then nothing is looked up: a download link 200, a release 204, an upload status the same 404 as before', async () => {
    const caller = await deletedCaller(h.http);
    // A record the purge never saw, and its object.
    const key = `uploads/${crypto.randomUUID()}.txt`;
    await h.bucket.putObject(key, 'left', 'text/plain');
    await h.model.create({
      key,
      ownerId: caller.id,
      contentType: 'text/plain',
      size: 4,
      state: 'attached',
      issuedAt: new Date(),
      attachedAt: new Date(),
    });

    expect((await h.http.post('/internal/uploads/download-link').set(caller.auth).send({ key })).status).toBe(200);
    expect((await h.http.get(`/multipart-uploads/${crypto.randomUUID()}`).set(caller.auth)).status).toBe(404);
    expect((await h.http.post('/internal/uploads/release').set(caller.auth).send({ key })).status).toBe(204);
    expect(await h.bucket.headObject(key)).toBeUndefined();
  });
});

describe('a claim made while its account is being deleted', () => {
  it('when the whole deletion runs while the claim waits for storage (after the first look, before the record is written), then the second look removes the record and the object, and the answer is 401', async () => {
    // The files app reaches the real S3 server through a pass-through, to act while storage answers.
    const toStorage = await startPassThrough(testStorageSettings().endpoint);
    const proxied = await startFiles(__filename, { S3_ENDPOINT: toStorage.url }, h.db);
    try {
      const caller = newCaller();
      const key = await uploadFile(h, caller, 'racing');
      toStorage.before(
        (req) => req.method === 'HEAD' && (req.url ?? '').includes(key.slice('uploads/'.length)),
        async () => {
          await deleteAccount(caller, proxied).expect(204);
        },
      );

      const res = await claim(caller, key, proxied);
      expect(toStorage.ran).toBe(true);
      expect([res.status, res.body]).toEqual([401, invalidToken]);
      expect(await h.model.findOne({ key }).lean()).toBeNull();
      expect(await h.bucket.headObject(key)).toBeUndefined();
    } finally {
      await proxied.close();
      await toStorage.close();
    }
  });
});
