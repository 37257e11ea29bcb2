import type { RunningSystem } from '@cs/devstack';
import { ObjectStorage } from '@cs/storage';
import { api, eventually, startTestSystem, testStorageSettings } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

/**
 * The contract's upload flow, as a client written from the contract alone does it: no `size`,
 * a PUT with only Content-Type. Links here last 5 s, are checked 0.5 s after, by a sweeper that
 * runs every 0.5 s: the longest an object breaking a rule may live is their sum (6 s), plus a pass.
 */
const TTL_S = 5;
const CHECK_DELAY_MS = 500;
const SWEEP_MS = 500;
const STATED_MS = TTL_S * 1000 + CHECK_DELAY_MS + SWEEP_MS;
/** One pass of the sweeper (a listing, a HEAD, a few writes) on a loaded machine, and a poll's step. */
const PASS_SLACK_MS = 3000;
const TOO_LARGE = new Uint8Array(26 * 1024 * 1024).fill(1);

let system: RunningSystem;
let http: ReturnType<typeof api>;
const bucket = new ObjectStorage(testStorageSettings());

beforeAll(async () => {
  system = await startTestSystem({
    env: {
      AUTH_RATE_LIMIT: '0',
      UPLOAD_URL_TTL_S: String(TTL_S),
      UPLOAD_CHECK_DELAY: `${CHECK_DELAY_MS}ms`,
      SWEEP_INTERVAL: `${SWEEP_MS}ms`,
    },
  });
  http = api(system.gatewayUrl);
}, 60_000);
afterAll(async () => {
  bucket.destroy();
  await system?.stop();
});

async function newUser(): Promise<{ Authorization: string }> {
  const email = `sizeless-${Date.now()}-${Math.random().toString(16).slice(2)}@example.com`;
  const res = await http.post('/api/auth/register').send({ email, password: 'password-123' });
  return { Authorization: `Bearer ${res.body.token}` };
}

/**
 * The contract's request and PUT, nothing more. The link was issued between `askedAt` and
 * `issuedBy`: its expiry is no earlier than `askedAt` + TTL and no later than `issuedBy` + TTL.
 */
async function contractUpload(auth: { Authorization: string }, body: string | Uint8Array<ArrayBuffer>) {
  const askedAt = Date.now();
  const link = await http.post('/upload-url').set(auth).send({ contentType: 'text/plain', filename: 'hello.txt' });
  const issuedBy = Date.now();
  expect(link.status).toBe(200);
  const put = await fetch(link.body.url, { method: 'PUT', headers: { 'Content-Type': 'text/plain' }, body });
  expect(put.status).toBe(200);
  return { url: link.body.url as string, key: link.body.key as string, askedAt, issuedBy };
}

describe('uploads through links without size, through the gateway', () => {
  it('when a client follows the contract (no size, only Content-Type), then the note holds the file and the download gives the same bytes', async () => {
    const auth = await newUser();
    const bytes = `contract upload ${Date.now()}`;
    const { key } = await contractUpload(auth, bytes);

    const note = await http.post('/api/notes').set(auth).send({ title: 'contract', attachmentKey: key });
    expect(note.status).toBe(201);
    const download = await http.get(`/api/notes/${note.body._id}/attachment`).set(auth).expect(200);

    expect(await (await fetch(download.body.url)).text()).toBe(bytes);
  });

  it('when an over-limit object is put and never claimed, then it is gone within the stated time, and not before its link expired', async () => {
    const auth = await newUser();
    const { key, askedAt, issuedBy } = await contractUpload(auth, TOO_LARGE);

    await eventually(
      'the over-limit object removed from storage',
      () => bucket.headObject(key),
      (head) => head === undefined,
      { timeoutMs: issuedBy + STATED_MS + PASS_SLACK_MS - Date.now() },
    );
    const gone = Date.now();

    expect(gone - askedAt).toBeGreaterThanOrEqual(TTL_S * 1000);
  });

  it('when a claimed file is replaced through its still-valid link by one over the limit, then after the link expires the object is removed and the note says why', async () => {
    const auth = await newUser();
    const { url, key, issuedBy } = await contractUpload(auth, 'the real file');
    const note = await http.post('/api/notes').set(auth).send({ title: 'replaced', attachmentKey: key });
    expect(note.status).toBe(201);

    const replaced = await fetch(url, { method: 'PUT', headers: { 'Content-Type': 'text/plain' }, body: TOO_LARGE });
    expect(replaced.status).toBe(200);

    await eventually(
      'the note without its attachment',
      async () => (await http.get(`/api/notes/${note.body._id}`).set(auth)).body.attachmentKey,
      (attachmentKey) => attachmentKey === null,
      { timeoutMs: issuedBy + STATED_MS + PASS_SLACK_MS - Date.now() },
    );
    const after = await http.get(`/api/notes/${note.body._id}`).set(auth).expect(200);
    expect(after.body.attachmentRemoved).toEqual({
      key,
      reason: 'The uploaded file is larger than the upload limit; it was removed',
      at: expect.any(String),
    });
    expect(await bucket.headObject(key)).toBeUndefined();
    await http.get(`/api/notes/${note.body._id}/attachment`).set(auth).expect(404);

    // Another attachment, and the note no longer speaks of the removed one.
    const next = await contractUpload(auth, 'a new file');
    const updated = await http.put(`/api/notes/${note.body._id}`).set(auth).send({ attachmentKey: next.key });
    expect(updated.status).toBe(200);
    expect(updated.body.attachmentRemoved).toBeUndefined();
  });
});
