/**
 * Promise: deleting an account removes everything it owns, everywhere, even when an owner of its
 * data is down at the time, and touches nothing of anyone else's.
 *
 * A digest of every database (each service's documents, bookkeeping aside) and of the bucket's
 * objects and multipart uploads is taken before, leaving out the deleted account's data; with
 * notes (then files) stopped, the account is deleted; once the owner is back and identity's
 * outbox is empty, the digest of everything must equal the one taken before.
 */
import { createHash } from 'node:crypto';
import { withDatabase } from '@cs/devstack';
import { ObjectStorage } from '@cs/storage';
import { type PopulatedAccount, populateAccount, testStorageSettings } from '@cs/testkit';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import mongoose, { type Connection } from 'mongoose';
import { type FaultSystem, recordFigures, sleep, startFaultSystem, until } from './harness';

const DATABASES = ['identity', 'posts', 'notes', 'files'] as const;
/** What a service keeps about its own work rather than anyone's data: left out of the digest. */
const BOOKKEEPING = new Set([
  'turns',
  'deleted_accounts',
  'account_deletions',
  'login_failures',
  'login_known',
  'password_resets',
  'password_reset_uses',
  'password_reset_requests',
  // The posts list's change log: deleting an account's published posts is an entry in it.
  'listing_changes',
  // The revocation log: a deleted account's tokens are refused until they expire
  // (JWT_EXPIRES_IN), and then its entries go.
  'revocations',
]);

let f: FaultSystem;
let storage: ObjectStorage;
const connections = {} as Record<(typeof DATABASES)[number], Connection>;
let bystanders: PopulatedAccount[];

beforeAll(async () => {
  f = await startFaultSystem({ env: { DELETION_OUTBOX_INTERVAL: '500ms' } });
  storage = new ObjectStorage({ ...testStorageSettings(), bucket: f.bucket });
  for (const name of DATABASES) {
    connections[name] = await mongoose.createConnection(withDatabase(f.mongoUrl, `${f.dbPrefix}${name}`)).asPromise();
  }
  bystanders = await Promise.all([1, 2].map((i) => populateAccount(f.system.gatewayUrl, `bystander${i}`)));
}, 120_000);
afterAll(async () => {
  await Promise.all(Object.values(connections).map((c) => c.close()));
  storage?.destroy();
  await f?.stop();
});

/** A value as text that is the same for the same data, whatever the order of keys. */
function canonical(value: unknown): string {
  if (value instanceof Date) return JSON.stringify(value.toISOString());
  if (value instanceof mongoose.Types.ObjectId) return JSON.stringify(value.toHexString());
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value).sort(([a], [b]) => a.localeCompare(b));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

const idText = (value: unknown) => (value instanceof mongoose.Types.ObjectId ? value.toHexString() : String(value));
/** A user's: by one of its id fields, or by an `_id` of `<kind>:<user id>` (identity's e-mail links). */
const belongsTo = (doc: Record<string, unknown>, userId: string) =>
  [doc._id, doc.authorId, doc.ownerId, doc.userId].some((v) => v !== undefined && idText(v) === userId) ||
  idText(doc._id).endsWith(`:${userId}`);

/** Every database and the bucket, as lines, leaving out `except`'s data. */
async function everything(except?: PopulatedAccount): Promise<string[]> {
  const lines: string[] = [];
  for (const name of DATABASES) {
    const db = connections[name].db;
    if (!db) throw new Error(`no database for ${name}`);
    for (const { name: collection } of await db.listCollections().toArray()) {
      if (BOOKKEEPING.has(collection) || collection.startsWith('system.')) continue;
      for (const doc of await db.collection(collection).find().toArray()) {
        if (except && belongsTo(doc, except.userId)) continue;
        lines.push(`${name}.${collection} ${canonical(doc)}`);
      }
    }
  }
  for (let after: string | undefined, more = true; more; ) {
    const page = await storage.listObjects('', { after });
    for (const object of page.objects) if (!except?.keys.includes(object.key)) lines.push(`object ${object.key}`);
    after = page.next;
    more = page.next !== undefined;
  }
  for (const upload of await storage.listMultipartUploads('')) {
    if (!except?.keys.includes(upload.key)) lines.push(`multipart ${upload.key} ${upload.uploadId}`);
  }
  return lines.sort();
}

const digest = (lines: string[]) => createHash('sha256').update(lines.join('\n')).digest('hex');

async function outboxEntry(userId: string) {
  return connections.identity.db
    ?.collection<{ _id: string; pending: string[] }>('account_deletions')
    .findOne({ _id: userId });
}

async function deleteWhileDown(owner: 'notes' | 'files') {
  const victim = await populateAccount(f.system.gatewayUrl, `victim-${owner}`);
  const before = await everything(victim);
  const withVictim = await everything();
  expect(withVictim.length).toBeGreaterThan(before.length); // the victim's data is there to delete

  await f.system.processes[owner].child.stop();
  const deletedAt = Date.now();
  const res = await fetch(`${f.system.gatewayUrl}/api/auth/account`, {
    method: 'DELETE',
    headers: { authorization: `Bearer ${victim.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ password: victim.password }),
  });
  expect(res.status).toBe(204);
  // The owners that are up confirm; the stopped one stays pending.
  const onlyOwnerPending = await until(
    async () => JSON.stringify((await outboxEntry(victim.userId))?.pending) === JSON.stringify([owner]),
    10_000,
  );
  expect(onlyOwnerPending).toBeDefined();
  await sleep(2_000);
  expect((await outboxEntry(victim.userId))?.pending).toEqual([owner]);

  const restartedAt = Date.now();
  await f.system.start(owner);
  const doneAfterMs = await until(async () => (await outboxEntry(victim.userId)) === null, 60_000, 100);
  expect(doneAfterMs).toBeDefined();

  const after = await everything();
  const missing = before.filter((line) => !after.includes(line));
  const extra = after.filter((line) => !before.includes(line));
  expect({ missing, extra }).toEqual({ missing: [], extra: [] });
  expect(digest(after)).toBe(digest(before));
  return {
    ownerDownMs: restartedAt - deletedAt,
    confirmedAfterOwnerBackMs: doneAfterMs,
    linesBefore: withVictim.length,
    victimLines: withVictim.length - before.length,
  };
}

it('when an account is deleted while notes is stopped, then once notes is back its data is gone from every database and storage, and nothing else changed', async () => {
  const figures = await deleteWhileDown('notes');
  recordFigures('account-deletion-notes-down', { what: 'account deleted while notes was stopped', ...figures });
});

it('when an account is deleted while files is stopped, then once files is back its objects and uploads are gone too, and nothing else changed', async () => {
  const figures = await deleteWhileDown('files');
  recordFigures('account-deletion-files-down', { what: 'account deleted while files was stopped', ...figures });
});

it('when the deleted account’s token is used to write afterwards, then every write is 401 and nothing changes', async () => {
  const victim = await populateAccount(f.system.gatewayUrl, 'victim-writes');
  const res = await fetch(`${f.system.gatewayUrl}/api/auth/account`, {
    method: 'DELETE',
    headers: { authorization: `Bearer ${victim.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ password: victim.password }),
  });
  expect(res.status).toBe(204);
  expect(await until(async () => (await outboxEntry(victim.userId)) === null, 30_000)).toBeDefined();
  const before = await everything();

  const write = (method: string, path: string, body: unknown) =>
    fetch(`${f.system.gatewayUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${victim.token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const answers = await Promise.all([
    write('POST', '/api/posts', { title: 'after', body: 'written after the deletion' }),
    write('POST', '/api/notes', { title: 'after' }),
    write('POST', '/api/upload-url', { contentType: 'text/plain', filename: 'a.txt', size: 1 }),
    write('POST', '/api/multipart-uploads', { contentType: 'application/zip', filename: 'a.zip', size: 1 }),
    write('PUT', `/api/posts/${bystanders[0]?.postIds[1]}`, { title: 'not mine' }),
  ]);

  expect(answers.map((a) => a.status)).toEqual([401, 401, 401, 401, 401]);
  expect(await everything()).toEqual(before);
});
