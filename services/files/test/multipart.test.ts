/**
 * Large files in parts, against the real S3 server: every part goes to storage through a link
 * signed with its length, and completion checks storage's own listing.
 */

import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { CompleteMultipartUploadCommand, S3Client, UploadPartCommand } from '@aws-sdk/client-s3';
import { refusal, testStorageSettings } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type Caller, type FilesHarness, newCaller, startFiles } from './helpers';

const MiB = 1024 * 1024;
const PART = 5 * MiB;
let h: FilesHarness;
const owner = newCaller();
const other = newCaller();
const s3Settings = testStorageSettings();
/** The test's own S3 client, with full rights: it does what no signed link allows. */
const s3 = new S3Client({
  endpoint: s3Settings.endpoint,
  region: s3Settings.region,
  forcePathStyle: true,
  credentials: { accessKeyId: s3Settings.accessKeyId, secretAccessKey: s3Settings.secretAccessKey },
});

beforeAll(async () => {
  h = await startFiles(__filename, {
    MULTIPART_PART_SIZE: String(PART),
    UPLOAD_MAX_BYTES_MULTIPART: String(64 * MiB),
    UPLOAD_CLAIM_TTL: '2s',
    // `owner` opens more uploads here than the per-account bound (10) allows at once, and a slot
    // comes back only when its upload completes, is aborted, or its claim TTL runs out: how many
    // were back by the last tests depended on how fast the file ran. The bound has its own file
    // (account-bounds.test.ts).
    UPLOAD_MAX_OPEN_MULTIPART: '100',
  });
});
afterAll(async () => {
  s3.destroy();
  await h.close();
});

interface Upload {
  uploadId: string;
  key: string;
  size: number;
  partSize: number;
  partCount: number;
}

async function create(caller: Caller, size: number): Promise<Upload> {
  const res = await h.http
    .post('/multipart-uploads')
    .set(caller.auth)
    .send({ contentType: 'application/zip', filename: 'big.zip', size });
  expect(res.status).toBe(201);
  return res.body;
}

async function sign(caller: Caller, upload: Upload, partNumbers: number[]) {
  const res = await h.http
    .post(`/multipart-uploads/${upload.uploadId}/part-urls`)
    .set(caller.auth)
    .send({ partNumbers });
  expect(res.status).toBe(200);
  return res.body.parts as { partNumber: number; url: string; headers: Record<string, string> }[];
}

/** Sends parts of `file` through signed links; answers each part's status. */
async function sendParts(upload: Upload, file: Buffer, partNumbers: number[]): Promise<number[]> {
  const parts = await sign(owner, upload, partNumbers);
  return Promise.all(
    parts.map(async ({ partNumber, url, headers }) => {
      const start = (partNumber - 1) * upload.partSize;
      const body = file.subarray(start, start + upload.partSize);
      return (await fetch(url, { method: 'PUT', headers, body })).status;
    }),
  );
}

const status = (caller: Caller, upload: Upload) => h.http.get(`/multipart-uploads/${upload.uploadId}`).set(caller.auth);
const complete = (caller: Caller, upload: Upload) =>
  h.http.post(`/multipart-uploads/${upload.uploadId}/complete`).set(caller.auth);

async function openUploadsAt(key: string): Promise<number> {
  return (await h.bucket.listMultipartUploads(key)).filter((u) => u.key === key).length;
}

describe('POST /multipart-uploads', () => {
  it('when the body is valid, then 201 with the id, key, part size and part count, and the upload is recorded and open in storage', async () => {
    const res = await h.http
      .post('/api/multipart-uploads')
      .set(owner.auth)
      .send({ contentType: 'application/zip', filename: 'Archive.ZIP', size: 2 * PART + 100 });

    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      uploadId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      key: `uploads/${res.body.uploadId}.zip`,
      size: 2 * PART + 100,
      partSize: PART,
      partCount: 3,
      completed: false,
    });
    expect(await h.model.findOne({ key: res.body.key }).lean()).toMatchObject({
      ownerId: owner.id,
      state: 'issued',
      size: 2 * PART + 100,
      multipart: { id: res.body.uploadId, partSize: PART, partCount: 3, completedAt: null },
    });
    expect(await openUploadsAt(res.body.key)).toBe(1);
  });

  it.each([
    [
      'no size',
      { contentType: 'application/zip', filename: 'a.zip' },
      'size must be a positive integer no larger than the upload limit',
    ],
    [
      'a size over the limit',
      { contentType: 'application/zip', filename: 'a.zip', size: 64 * MiB + 1 },
      'size must be a positive integer no larger than the upload limit',
    ],
    [
      'a type not allowed',
      { contentType: 'text/html', filename: 'a.html', size: 10 },
      'contentType must be one of: image/png, image/jpeg, image/gif, image/webp, application/pdf, text/plain, application/json, application/zip',
    ],
    ['no filename', { contentType: 'application/zip', size: 10 }, 'contentType and filename are required strings'],
  ])('when the body has %s, then 400 with the reason', async (_case, body, error) => {
    const res = await h.http.post('/multipart-uploads').set(owner.auth).send(body);
    expect(res.status).toBe(400);
    expect(res.body).toEqual(refusal(error));
  });

  it('when there is no token, then 401', async () => {
    const res = await h.http
      .post('/multipart-uploads')
      .send({ contentType: 'application/zip', filename: 'a.zip', size: 1 });
    expect(res.status).toBe(401);
  });
});

describe('a multipart upload, part by part, against the real storage server', () => {
  it('when every part is sent through its link, then the status lists them, completion joins them, and the object is the very bytes, claimable like any upload', async () => {
    const file = randomBytes(2 * PART + 100);
    const upload = await create(owner, file.length);
    const parts = await sign(owner, upload, [1, 2, 3]);
    expect(parts.map((p) => [p.partNumber, p.headers])).toEqual([
      [1, { 'Content-Length': String(PART) }],
      [2, { 'Content-Length': String(PART) }],
      [3, { 'Content-Length': '100' }],
    ]);
    expect(new URL(parts[0]?.url ?? '').searchParams.get('X-Amz-SignedHeaders')?.split(';')).toContain(
      'content-length',
    );

    expect(await sendParts(upload, file, [1, 3])).toEqual([200, 200]);
    const partial = await status(owner, upload);
    expect(partial.status).toBe(200);
    expect(partial.body).toMatchObject({
      completed: false,
      parts: [
        { partNumber: 1, size: PART },
        { partNumber: 3, size: 100 },
      ],
    });

    expect(await sendParts(upload, file, [2])).toEqual([200]);
    const done = await complete(owner, upload);
    expect(done.status).toBe(200);
    expect(done.body).toEqual({ key: upload.key, size: file.length });
    expect((await h.bucket.getObject(upload.key)).equals(file)).toBe(true);
    expect(await openUploadsAt(upload.key)).toBe(0);

    // Completing again answers the same; the status says it is complete.
    expect((await complete(owner, upload)).body).toEqual({ key: upload.key, size: file.length });
    expect((await status(owner, upload)).body).toMatchObject({ completed: true, parts: [] });
    const claim = await h.http.post('/internal/uploads/claim').set(owner.auth).send({ key: upload.key });
    expect(claim.status).toBe(200);
    expect(claim.body).toEqual({
      key: upload.key,
      contentType: 'application/zip',
      size: file.length,
      filename: 'big.zip',
    });

    // Attached: no more parts, and no abort (the note owns it now).
    const late = await h.http
      .post(`/multipart-uploads/${upload.uploadId}/part-urls`)
      .set(owner.auth)
      .send({ partNumbers: [1] });
    expect(late.status).toBe(409);
    const abort = await h.http.delete(`/multipart-uploads/${upload.uploadId}`).set(owner.auth);
    expect(abort.status).toBe(409);
    expect(await h.bucket.headObject(upload.key)).toBeDefined();
  });

  it('when storage joined the parts but the answer was lost, then the status says completed and complete answers the key', async () => {
    const file = randomBytes(PART + 10);
    const upload = await create(owner, file.length);
    await sendParts(upload, file, [1, 2]);
    const record = await h.model.findOne({ key: upload.key }).lean();
    const uploadId = record?.multipart?.storageUploadId as string;
    const parts = (await h.bucket.listParts(upload.key, uploadId)) ?? [];
    await s3.send(
      new CompleteMultipartUploadCommand({
        Bucket: h.bucket.bucket,
        Key: upload.key,
        UploadId: uploadId,
        MultipartUpload: { Parts: parts.map((p) => ({ PartNumber: p.partNumber, ETag: p.etag })) },
      }),
    );

    expect((await status(owner, upload)).body).toMatchObject({ completed: true, parts: [] });
    expect((await complete(owner, upload)).body).toEqual({ key: upload.key, size: file.length });
    expect((await h.model.findOne({ key: upload.key }).lean())?.multipart?.completedAt).toBeInstanceOf(Date);
  });

  it('when a part has another length than its link was signed for, then storage refuses it and holds nothing for it', async () => {
    const file = randomBytes(PART + 10);
    const upload = await create(owner, file.length);
    const [part] = await sign(owner, upload, [2]);

    for (const body of [Buffer.alloc(11), Buffer.alloc(9)]) {
      const put = await fetch(part?.url ?? '', { method: 'PUT', body });
      expect(put.status).toBe(403);
    }
    expect((await status(owner, upload)).body.parts).toEqual([]);
  });

  it('when a part is missing, then completion is refused with the missing numbers, and the upload stays open to resume', async () => {
    const file = randomBytes(2 * PART + 1);
    const upload = await create(owner, file.length);
    await sendParts(upload, file, [1, 3]);

    const res = await complete(owner, upload);
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ error: 'Parts not uploaded yet: 2' });
    expect(await h.bucket.headObject(upload.key)).toBeUndefined();

    await sendParts(upload, file, [2]);
    expect((await complete(owner, upload)).status).toBe(200);
  });

  it('when storage holds more bytes than declared (a part no link allowed), then completion is refused and nothing is joined', async () => {
    const file = randomBytes(PART + 10);
    const upload = await create(owner, file.length);
    await sendParts(upload, file, [1, 2]);
    const record = await h.model.findOne({ key: upload.key }).lean();
    await s3.send(
      new UploadPartCommand({
        Bucket: h.bucket.bucket,
        Key: upload.key,
        UploadId: record?.multipart?.storageUploadId,
        PartNumber: 3,
        Body: Buffer.alloc(10),
      }),
    );

    const res = await complete(owner, upload);
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ error: 'The uploaded parts do not add up to the declared size' });
    expect(await h.bucket.headObject(upload.key)).toBeUndefined();
  });

  it.each([
    ['not an array', { partNumbers: 1 }, 'partNumbers must be an array of 1 to 100 positive integers'],
    ['empty', { partNumbers: [] }, 'partNumbers must be an array of 1 to 100 positive integers'],
    ['a zero', { partNumbers: [0] }, 'partNumbers must be an array of 1 to 100 positive integers'],
    ['a string', { partNumbers: ['1'] }, 'partNumbers must be an array of 1 to 100 positive integers'],
    [
      'over 100 of them',
      { partNumbers: Array.from({ length: 101 }, (_, i) => i + 1) },
      'partNumbers must be an array of 1 to 100 positive integers',
    ],
    ['one past the last part', { partNumbers: [1, 3] }, 'partNumbers must be between 1 and 2 for this upload'],
  ])('when partNumbers is %s, then 400 with the reason', async (_case, body, error) => {
    const upload = await create(owner, PART + 1);
    const res = await h.http.post(`/multipart-uploads/${upload.uploadId}/part-urls`).set(owner.auth).send(body);
    expect(res.status).toBe(400);
    expect(res.body).toEqual(refusal(error));
  });
});

describe('ownership, abort and the sweeper', () => {
  it('when another user, or an unknown or malformed id, names an upload, then every route answers the same 404 and nothing changes', async () => {
    const file = randomBytes(PART + 1);
    const upload = await create(owner, file.length);
    await sendParts(upload, file, [1, 2]);
    const unknown = { ...upload, uploadId: crypto.randomUUID() };
    const malformed = { ...upload, uploadId: 'not-an-id' };

    for (const [caller, target] of [
      [other, upload],
      [owner, unknown],
      [owner, malformed],
    ] as const) {
      const answers = [
        await h.http
          .post(`/multipart-uploads/${target.uploadId}/part-urls`)
          .set(caller.auth)
          .send({ partNumbers: [1] }),
        await status(caller, target),
        await complete(caller, target),
        await h.http.delete(`/multipart-uploads/${target.uploadId}`).set(caller.auth),
      ];
      for (const res of answers) {
        expect(res.status).toBe(404);
        expect(res.body).toEqual({ error: 'Upload not found' });
      }
    }
    expect((await status(owner, upload)).body.parts).toHaveLength(2);
    expect(await openUploadsAt(upload.key)).toBe(1);
  });

  it('when the owner aborts, then 204, storage holds no upload and no parts, and the id is gone', async () => {
    const file = randomBytes(PART + 1);
    const upload = await create(owner, file.length);
    await sendParts(upload, file, [1, 2]);
    const record = await h.model.findOne({ key: upload.key }).lean();

    const res = await h.http.delete(`/api/multipart-uploads/${upload.uploadId}`).set(owner.auth);
    expect(res.status).toBe(204);
    expect(await openUploadsAt(upload.key)).toBe(0);
    expect(await h.bucket.listParts(upload.key, record?.multipart?.storageUploadId ?? '')).toBeUndefined();
    expect(await h.bucket.headObject(upload.key)).toBeUndefined();
    expect((await status(owner, upload)).status).toBe(404);
    expect((await h.http.delete(`/multipart-uploads/${upload.uploadId}`).set(owner.auth)).status).toBe(204);
  });

  it('when an upload was never completed within the claim TTL, then the sweeper aborts it and no parts are left', async () => {
    const file = randomBytes(PART + 1);
    const upload = await create(owner, file.length);
    await sendParts(upload, file, [1]);
    await sleep(2100);

    await h.sweeper.releaseStale();

    expect(await openUploadsAt(upload.key)).toBe(0);
    expect((await h.model.findOne({ key: upload.key }).lean())?.state).toBe('released');
    expect((await status(owner, upload)).status).toBe(404);
  });
});
