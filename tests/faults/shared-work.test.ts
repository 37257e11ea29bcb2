/**
 * Promise 7: work is shared and nothing is done twice. Three replicas each of notes and files run
 * the release outbox and the sweeper on the same data, at once, through a storage outage; three
 * identity replicas take bursts of registrations of one address. Every release happens, each
 * exactly once, and every address has one user.
 *
 * What "exactly once" is, observably, read from the replicas' own /metrics after the work:
 * - the notes outbox: files answered 2xx to exactly one release call per deleted note (the sum
 *   of `POST /internal/uploads/release` 2xx over the files replicas). An entry leaves the outbox
 *   only after such an answer, so each had at least one; a total equal to the number of entries
 *   leaves none with two. Two notes replicas taking one entry would each send it, and files
 *   answers 204 to a key already released: that is one 2xx too many.
 * - the files release: one successful DeleteObject per released record (the sum of
 *   `storage_operation_duration_seconds_count{operation="DeleteObject",outcome="ok"}`, less the
 *   unclaimed objects the sweeper deleted, which have no record and may be deleted by two
 *   replicas by design), and one successful AbortMultipartUpload per swept multipart upload.
 *   Every record ends released with its object gone, so each was deleted at least once; equal
 *   totals leave none deleted twice, which two replicas acting on one record would do.
 * Failed calls (storage away) are counted apart (outcome "error", or a 503), and retried.
 */
import { readFile } from 'node:fs/promises';
import { ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { withDatabase } from '@cs/devstack';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import mongoose from 'mongoose';
import { type FaultSystem, ownStorageClient, recordFigures, sleep, startFaultSystem, until } from './harness';

const REPLICAS = 3;
/** Notes with a file deleted while everything works, and then during the storage outage. */
const NOTES_BEFORE = 12;
const NOTES_DURING = 12;
/** Multipart uploads never completed: records the sweeper must release. */
const MULTIPART = 8;
/** Single-PUT uploads never attached: objects without a record, which the sweeper deletes. */
const UNCLAIMED = 8;
const OUTAGE_MS = 5000;
/** UPLOAD_CLAIM_TTL: the sweeper takes unattached uploads this long after their issue. */
const CLAIM_TTL_MS = 4000;
const BURSTS = 5;
const BURST = 9;

let f: FaultSystem;
let s3: S3Client;

beforeAll(async () => {
  f = await startFaultSystem({
    ownStorage: true,
    replicas: { identity: REPLICAS, notes: REPLICAS, files: REPLICAS },
    metrics: true,
    processEnv: {
      notes: { OUTBOX_INTERVAL: '500ms' },
      files: { SWEEP_INTERVAL: '500ms', UPLOAD_CLAIM_TTL: `${CLAIM_TTL_MS}ms` },
    },
  });
  s3 = ownStorageClient(f);
}, 120_000);
afterAll(async () => {
  s3?.destroy();
  await f?.stop();
});

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

async function api(
  path: string,
  { method = 'GET', token, body }: { method?: string; token?: string; body?: unknown } = {},
) {
  const headers: Record<string, string> = {};
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${f.system.gatewayUrl}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(15_000),
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} } as Answer;
}

function expectStatus(answer: Answer, status: number, what: string): Answer {
  if (answer.status !== status) throw new Error(`${what}: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer;
}

async function register(email: string): Promise<string> {
  const answer = await api('/api/auth/register', { method: 'POST', body: { email, password: 'a long password' } });
  return expectStatus(answer, 201, 'register').body.token as string;
}

/** A file put straight to storage through an upload link; its key. */
async function upload(token: string, text: string): Promise<string> {
  const link = expectStatus(
    await api('/api/upload-url', {
      method: 'POST',
      token,
      body: { contentType: 'text/plain', filename: 'f.txt', size: Buffer.byteLength(text) },
    }),
    200,
    'upload link',
  ).body as { url: string; key: string; headers: Record<string, string> };
  const put = await fetch(link.url, { method: 'PUT', headers: link.headers, body: text });
  if (!put.ok) throw new Error(`PUT ${put.status}`);
  return link.key;
}

async function noteWithFile(token: string, text: string): Promise<{ id: string; key: string }> {
  const key = await upload(token, text);
  const note = expectStatus(
    await api('/api/notes', { method: 'POST', token, body: { title: text, attachmentKey: key } }),
    201,
    'note',
  );
  return { id: note.body._id as string, key };
}

async function bucketKeys(): Promise<string[]> {
  const out = await s3.send(new ListObjectsV2Command({ Bucket: f.bucket }));
  return (out.Contents ?? []).map((o) => o.Key ?? '').sort();
}

/** One service's database, straight: what the API cannot show. */
async function withServiceDb<T>(service: string, use: (db: mongoose.mongo.Db) => Promise<T>): Promise<T> {
  const connection = await mongoose.createConnection(withDatabase(f.mongoUrl, `${f.dbPrefix}${service}`)).asPromise();
  try {
    if (!connection.db) throw new Error(`no ${service} database`);
    return await use(connection.db);
  } finally {
    await connection.close();
  }
}

/** Each replica's value of a metric: the sum of its series whose labels include `labels`. */
async function perReplica(
  service: 'notes' | 'files',
  metric: string,
  labels: Record<string, string> = {},
): Promise<number[]> {
  return Promise.all(
    f.system.replicas[service].map(async (p) => {
      if (!p.metricsUrl) throw new Error(`${service}-${p.replica + 1} serves no metrics`);
      const text = await (await fetch(p.metricsUrl)).text();
      let sum = 0;
      for (const line of text.split('\n')) {
        const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
        if (!m || m[1] !== metric) continue;
        const series = m[2] ?? '';
        if (Object.entries(labels).every(([k, v]) => series.includes(`${k}="${v}"`))) sum += Number(m[3]);
      }
      return sum;
    }),
  );
}

const total = (counts: number[]) => counts.reduce((a, b) => a + b, 0);

/** Lines of each replica's log that contain `text`. */
async function logLines(service: 'notes' | 'files', text: string): Promise<number[]> {
  return Promise.all(
    f.system.replicas[service].map(
      async (p) => (await readFile(p.logFile, 'utf8')).split('\n').filter((l) => l.includes(text)).length,
    ),
  );
}

it('when three notes and three files replicas run the outbox and the sweeper on the same releases through a storage outage, then every object is gone, every record released, and each release done exactly once', async () => {
  const owners = await Promise.all([1, 2, 3, 4].map((i) => register(`shared-${i}-${Date.now()}@example.com`)));
  const ownerOf = (i: number) => owners[i % owners.length] as string;

  // While everything works: the immediate release and the replicas' outbox passes race.
  const before = await Promise.all(Array.from({ length: NOTES_BEFORE }, (_, i) => noteWithFile(ownerOf(i), `b${i}`)));
  const deletedBefore = await Promise.all(
    before.map((n, i) => api(`/api/notes/${n.id}`, { method: 'DELETE', token: ownerOf(i) })),
  );
  expect(deletedBefore.map((a) => a.status)).toEqual(before.map(() => 204));
  const releasedBefore = await until(
    async () =>
      withServiceDb('files', async (db) => {
        const keys = before.map((n) => n.key);
        return (
          (await db.collection('uploads').countDocuments({ key: { $in: keys }, state: 'released' })) === keys.length
        );
      }),
    20_000,
    250,
  );
  expect(releasedBefore).toBeDefined();

  // Then storage goes away, just as notes are deleted and multipart uploads fall due: the
  // releases fail, and three outboxes and three sweepers all retry them once it is back.
  const during = await Promise.all(Array.from({ length: NOTES_DURING }, (_, i) => noteWithFile(ownerOf(i), `d${i}`)));
  const multipart = await Promise.all(
    Array.from({ length: MULTIPART }, async (_, i) => {
      const answer = await api('/api/multipart-uploads', {
        method: 'POST',
        token: ownerOf(i),
        body: { contentType: 'application/zip', filename: `m${i}.zip`, size: 1000 },
      });
      return expectStatus(answer, 201, 'multipart upload').body.key as string;
    }),
  );
  await f.storage?.kill();
  const deletedDuring = await Promise.all(
    during.map((n, i) => api(`/api/notes/${n.id}`, { method: 'DELETE', token: ownerOf(i) })),
  );
  expect(deletedDuring.map((a) => a.status)).toEqual(during.map(() => 204));
  await sleep(OUTAGE_MS);
  await f.storage?.restart();

  // Uploads never attached, put once storage is back (so no sweeper pass that deletes them is
  // cut short by the outage, and every deletion is counted).
  await Promise.all(Array.from({ length: UNCLAIMED }, (_, i) => upload(ownerOf(i), `u${i}`)));

  const records = [...before, ...during].map((n) => n.key).concat(multipart);
  const state = () =>
    Promise.all([
      bucketKeys(),
      withServiceDb('files', (db) =>
        db
          .collection('uploads')
          .find({ key: { $in: records } })
          .project<{ key: string; state: string; attempts: number }>({ _id: 0, key: 1, state: 1, attempts: 1 })
          .toArray(),
      ),
      withServiceDb('notes', (db) => db.collection('pendingreleases').countDocuments()),
    ]);
  const settledAfterMs = await until(
    async () => {
      const [left, recs, pending] = await state();
      return left.length === 0 && recs.every((r) => r.state === 'released') && pending === 0;
    },
    45_000,
    500,
  );
  // A pass that began just before the end may still be sending: the counts are read after it.
  await sleep(1000);
  const [left, recs, pending] = await state();

  const releaseCalls = await perReplica('files', 'http_server_request_duration_seconds_count', {
    method: 'POST',
    route: '/internal/uploads/release',
    status_class: '2xx',
  });
  const failedReleaseCalls = await perReplica('files', 'http_server_request_duration_seconds_count', {
    method: 'POST',
    route: '/internal/uploads/release',
    status_class: '5xx',
  });
  const deletes = await perReplica('files', 'storage_operation_duration_seconds_count', {
    operation: 'DeleteObject',
    outcome: 'ok',
  });
  const failedDeletes = await perReplica('files', 'storage_operation_duration_seconds_count', {
    operation: 'DeleteObject',
    outcome: 'error',
  });
  const aborts = await perReplica('files', 'storage_operation_duration_seconds_count', {
    operation: 'AbortMultipartUpload',
    outcome: 'ok',
  });
  const swept = await perReplica('files', 'files_sweeper_removed_total', { kind: 'stale' });
  const sweptUnclaimed = await perReplica('files', 'files_sweeper_removed_total', { kind: 'unclaimed' });
  const outboxRetries = await logLines('notes', 'release failed; will retry');
  const notesDeletes = await perReplica('notes', 'http_server_request_duration_seconds_count', {
    method: 'DELETE',
    route: '/api/notes/:id',
  });

  recordFigures('shared-work', {
    what: `${REPLICAS} notes and ${REPLICAS} files replicas (outbox every 500 ms, sweeper every 500 ms, claim TTL ${CLAIM_TTL_MS} ms): ${NOTES_BEFORE} notes with files deleted, then ${NOTES_DURING} more during a ${OUTAGE_MS / 1000} s storage outage (versitygw SIGKILLed), ${MULTIPART} multipart uploads never completed, ${UNCLAIMED} uploads never attached`,
    settledAfterMs,
    perReplica: {
      notesDeletesServed: notesDeletes,
      notesOutboxRetriesLogged: outboxRetries,
      filesReleaseCalls2xx: releaseCalls,
      filesReleaseCalls5xx: failedReleaseCalls,
      filesSweeperReleases: swept,
      filesSweeperUnclaimedDeleted: sweptUnclaimed,
      storageDeleteObjectOk: deletes,
      storageDeleteObjectFailed: failedDeletes,
      storageAbortMultipartOk: aborts,
    },
    releasesOwed: NOTES_BEFORE + NOTES_DURING,
    releaseCalls2xx: total(releaseCalls),
    recordsToRelease: records.length,
    objectsDeleted: total(deletes),
    unclaimedSwept: total(sweptUnclaimed),
    multipartAborted: total(aborts),
    maxAttemptsOfARecord: Math.max(...recs.map((r) => r.attempts)),
    objectsLeft: left.length,
  });

  expect(settledAfterMs).toBeDefined();
  expect(left).toEqual([]);
  expect(pending).toBe(0);
  expect(recs.map((r) => `${r.key} ${r.state}`).sort()).toEqual(records.map((k) => `${k} released`).sort());
  // The outage really made work to retry, and the retries were shared.
  expect(total(failedReleaseCalls)).toBeGreaterThan(0);
  // Each owed release answered once; each object deleted once, a record's or an upload never
  // attached (the sweeper records those before it releases them, so which step removed one is not
  // counted apart); each upload aborted once.
  expect(total(releaseCalls)).toBe(NOTES_BEFORE + NOTES_DURING);
  expect(total(deletes)).toBe(records.length + UNCLAIMED);
  expect(total(aborts)).toBe(MULTIPART);
  // The balancer spread the deletes and the release calls over every replica.
  expect(notesDeletes.every((n) => n > 0)).toBe(true);
  expect(releaseCalls.every((n) => n > 0)).toBe(true);
});

it('when three identity replicas take bursts of concurrent registrations of one address in mixed case, then each burst gets one 201 and the rest 400, and each address has one user', async () => {
  const statsBefore = (await f.system.balancer?.stats())?.identity ?? [];
  const tag = `burst-${Date.now()}`;
  const bursts: number[][] = [];
  const emails: string[] = [];
  for (let b = 0; b < BURSTS; b++) {
    const email = `${tag}-${b}@example.com`;
    emails.push(email);
    const answers = await Promise.all(
      Array.from({ length: BURST }, (_, i) =>
        api('/api/auth/register', {
          method: 'POST',
          body: { email: i % 2 ? email.toUpperCase() : email, password: `password-${i}` },
        }),
      ),
    );
    bursts.push(answers.map((a) => a.status));
    for (const a of answers) {
      if (a.status === 400) expect(a.body).toEqual({ error: 'Email is already registered' });
    }
  }
  const statsAfter = (await f.system.balancer?.stats())?.identity ?? [];
  const perIdentity = statsAfter.map((s, i) => s.requests - (statsBefore[i]?.requests ?? 0));
  const users = await withServiceDb('identity', (db) =>
    db
      .collection('users')
      .aggregate<{ _id: string; n: number }>([
        { $match: { email: { $regex: `^${tag}-` } } },
        { $group: { _id: '$email', n: { $sum: 1 } } },
      ])
      .toArray(),
  );

  recordFigures('shared-work-registrations', {
    what: `${BURSTS} bursts of ${BURST} concurrent registrations of one address (mixed case) over ${REPLICAS} identity replicas`,
    registrationBursts: bursts.map((s) => s.join(' ')).join(' | '),
    requestsPerIdentityReplica: perIdentity,
    usersPerAddress: users.map((u) => u.n),
  });

  for (const statuses of bursts) {
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 400)).toHaveLength(BURST - 1);
  }
  expect(users.map((u) => `${u._id} ${u.n}`).sort()).toEqual(emails.map((e) => `${e} 1`).sort());
  // Every replica took part in the bursts.
  expect(perIdentity).toHaveLength(REPLICAS);
  expect(perIdentity.every((n) => n > 0)).toBe(true);
});
