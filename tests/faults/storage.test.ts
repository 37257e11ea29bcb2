/**
 * Promise 2: storage goes away. Upload links, attachment links and releases answer JSON 503;
 * posts, auth and notes without attachments carry on. Releases that failed are finished by the
 * outbox once storage is back, and no object is left behind.
 */
import { ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { type Answer, type Outcome, Traffic } from '../../bench/src/traffic';
import { type FaultSystem, ownStorageClient, recordFigures, sleep, startFaultSystem, until } from './harness';

let f: FaultSystem;
let traffic: Traffic;
let s3: S3Client;

beforeAll(async () => {
  f = await startFaultSystem({ ownStorage: true });
  // Everything but upload links: the traffic that must not notice storage is gone.
  traffic = new Traffic({ baseUrl: f.system.gatewayUrl, workers: 4, mix: { uploadUrl: 0 } });
  await traffic.prepare();
  s3 = ownStorageClient(f);
}, 120_000);
afterAll(async () => {
  s3?.destroy();
  await traffic?.stop();
  await f?.stop();
});

async function objectKeys(): Promise<string[]> {
  const out = await s3.send(new ListObjectsV2Command({ Bucket: f.bucket }));
  return (out.Contents ?? []).map((o) => o.Key ?? '').sort();
}

/** A note with a real file: link, PUT straight to storage, note with the key. */
async function noteWithFile(token: string, text: string): Promise<{ id: string; key: string }> {
  const link = await traffic.fetch('/api/upload-url', {
    method: 'POST',
    token,
    body: { contentType: 'text/plain', filename: 'f.txt', size: Buffer.byteLength(text) },
  });
  const { url, key, headers } = link.body as { url: string; key: string; headers: Record<string, string> };
  const put = await fetch(url, { method: 'PUT', headers, body: text });
  if (!put.ok) throw new Error(`PUT ${put.status}`);
  const note = await traffic.fetch('/api/notes', { method: 'POST', token, body: { title: text, attachmentKey: key } });
  if (note.status !== 201) throw new Error(`note ${note.status}`);
  return { id: (note.body as { _id: string })._id, key };
}

const ok = (o: Outcome | Answer) => o.status >= 200 && o.status < 300;
const json503 = (a: Omit<Answer, 'requestId'>) =>
  a.status === 503 && a.json && (a.body as { error?: unknown }).error !== undefined;

it('when storage is killed under load, then only storage operations answer JSON 503, and once it is back the failed releases finish and no object is left behind', async () => {
  const owner = (
    await traffic.fetch('/api/auth/register', {
      method: 'POST',
      body: { email: `files-${traffic.tag}@example.com`, password: 'a long password' },
    })
  ).body as { token: string };
  const token = owner.token;
  const kept = await noteWithFile(token, 'kept through the outage');
  const doomed = await Promise.all([1, 2, 3].map((i) => noteWithFile(token, `deleted during the outage ${i}`)));
  // A file uploaded but not yet attached to a note, to attach during the outage.
  const spare = (
    await traffic.fetch('/api/upload-url', {
      method: 'POST',
      token,
      body: { contentType: 'text/plain', filename: 'spare.txt', size: 5 },
    })
  ).body as { url: string; key: string; headers: Record<string, string> };
  expect((await fetch(spare.url, { method: 'PUT', headers: spare.headers, body: 'spare' })).status).toBe(200);
  expect(await objectKeys()).toEqual([kept.key, spare.key, ...doomed.map((d) => d.key)].sort());

  traffic.start();
  await sleep(2000);
  const killedAt = Date.now();
  await f.storage?.kill();
  const notReadyAfterMs = await until(
    async () => (await fetch(`${f.system.processes.files.url}/readyz`)).status === 503,
    10_000,
  );

  // Storage operations, each through the gateway as a client does them.
  const timed = async (call: () => Promise<Omit<Answer, 'requestId'>>) => {
    const t = Date.now();
    const answer = await call();
    return { ...answer, ms: Date.now() - t };
  };
  const uploadLink = await timed(() =>
    traffic.fetch('/api/upload-url', {
      method: 'POST',
      token,
      body: { contentType: 'text/plain', filename: 'x.txt', size: 1 },
    }),
  );
  const attachmentLink = await timed(() => traffic.fetch(`/api/notes/${kept.id}/attachment`, { token }));
  const attachOnCreate = await timed(() =>
    traffic.fetch('/api/notes', { method: 'POST', token, body: { title: 'x', attachmentKey: spare.key } }),
  );
  // The release itself, as the notes service asks for it:
  const release = await timed(async () => {
    const res = await fetch(`${f.system.processes.files.url}/internal/uploads/release`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ key: doomed[0]?.key }),
    });
    return { status: res.status, json: true, body: await res.json() };
  });
  // Deleting a note with a file still works: the release waits in the outbox.
  const deletes = await Promise.all(
    doomed.map((d) => traffic.fetch(`/api/notes/${d.id}`, { method: 'DELETE', token })),
  );
  await sleep(Math.max(0, 6000 - (Date.now() - killedAt)));

  const restartedAt = Date.now();
  await f.storage?.restart();
  const backAt = Date.now();
  const linksAgainAfterMs = await until(
    async () =>
      (
        await traffic.fetch('/api/upload-url', {
          method: 'POST',
          token,
          body: { contentType: 'text/plain', filename: 'y.txt', size: 1 },
        })
      ).status === 200,
    10_000,
  );
  const releasedAfterMs = await until(async () => (await objectKeys()).length === 2, 90_000, 250);
  await traffic.stop();
  // The file that could not be attached during the outage can be now.
  const attachedLater = await traffic.fetch('/api/notes', {
    method: 'POST',
    token,
    body: { title: 'attached after the outage', attachmentKey: spare.key },
  });

  const during = traffic.outcomes.filter((o) => o.startedAt + o.ms >= killedAt && o.startedAt < backAt);
  const verified = await traffic.verify();
  const left = await objectKeys();
  // Keys issued during the test that were never used are not objects: nothing was PUT.
  recordFigures('storage', {
    what: 'versitygw killed (SIGKILL) for 6 s under 4 workers of posts, auth and notes without files; 3 notes with files deleted during the outage',
    otherTrafficDuringOutage: Traffic.summarize(during),
    storageCallsDuringOutage: {
      uploadLink: `${uploadLink.status} in ${uploadLink.ms} ms`,
      attachmentLink: `${attachmentLink.status} in ${attachmentLink.ms} ms`,
      attachOnCreate: `${attachOnCreate.status} in ${attachOnCreate.ms} ms`,
      release: `${release.status} in ${release.ms} ms`,
      noteDeletes: deletes.map((d) => d.status).join(', '),
    },
    filesNotReadyAfterMs: notReadyAfterMs,
    outageMs: restartedAt - killedAt,
    uploadLinksAgainAfterMs: linksAgainAfterMs,
    releasesFinishedAfterMs: releasedAfterMs,
    objectsLeft: left.length,
    writesVerified: verified.checked,
  });

  for (const answer of [uploadLink, attachmentLink, attachOnCreate, release]) {
    expect({ status: answer.status, json503: json503(answer), fast: answer.ms < 2000 }).toEqual({
      status: 503,
      json503: true,
      fast: true,
    });
  }
  expect(deletes.map((d) => d.status)).toEqual([204, 204, 204]);
  expect(during.length).toBeGreaterThan(50);
  expect(during.filter((o) => !ok(o))).toEqual([]);
  expect(notReadyAfterMs).toBeDefined();
  expect(linksAgainAfterMs).toBeDefined();
  expect(releasedAfterMs).toBeDefined();
  expect(attachedLater.status).toBe(201);
  expect(left).toEqual([kept.key, spare.key].sort());
  expect(verified.problems).toEqual([]);
  // The note that kept its file still downloads.
  const link = await traffic.fetch(`/api/notes/${kept.id}/attachment`, { token });
  expect(link.status).toBe(200);
  expect(await (await fetch((link.body as { url: string }).url)).text()).toBe('kept through the outage');
});
