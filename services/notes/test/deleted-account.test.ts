import { randomUUID } from 'node:crypto';
import { deletedCaller, type PassThrough, startPassThrough, tellDeleted } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type Caller, type NotesHarness, newCaller, startNotes, upload } from './helpers';

let h: NotesHarness;
/** Notes reaches the real files process through this: a test can act while a call to files waits. */
let toFiles: PassThrough;

beforeAll(async () => {
  toFiles = await startPassThrough();
  h = await startNotes(__filename, {
    filesUrl: (url) => {
      toFiles.target = url;
      return toFiles.url;
    },
  });
});
afterAll(async () => {
  await h.close();
  await toFiles.close();
});

const deleteAccount = (caller: Caller) => tellDeleted(h.http, caller);
const notesOf = (caller: Caller) => h.notes.countDocuments({ authorId: caller.id });
const releasesOwedTo = (caller: Caller) => h.pending.countDocuments({ ownerId: caller.id });
const claimAtFiles = (caller: Caller, key: string) =>
  fetch(`${h.files.url}/internal/uploads/claim`, {
    method: 'POST',
    headers: { ...caller.auth, 'content-type': 'application/json' },
    body: JSON.stringify({ key }),
  });

/** A note and a release owed for the caller, written straight to the database. */
async function seedFor(caller: Caller) {
  const note = await h.notes.create({ title: 'seeded', authorId: caller.id });
  const dueAt = new Date(Date.now() + 3_600_000);
  await h.pending.create({ noteId: note._id, ownerId: caller.id, key: `uploads/${randomUUID()}.txt`, dueAt });
  return note._id.toHexString();
}

describe('POST /internal/users/deleted', () => {
  it("when called with the deleted user's token, then 204, a tombstone is recorded, every note of theirs and every release owed for them is gone, and another user's stay", async () => {
    const gone = newCaller();
    const kept = newCaller();
    await h.http.post('/api/notes').set(gone.auth).send({ title: 'mine' }).expect(201);
    await seedFor(gone);
    await seedFor(kept);

    const res = await deleteAccount(gone);
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect(await h.accounts.isDeleted(gone.id)).toBe(true);
    expect(await h.accounts.isDeleted(kept.id)).toBe(false);
    expect([await notesOf(gone), await releasesOwedTo(gone)]).toEqual([0, 0]);
    expect([await notesOf(kept), await releasesOwedTo(kept)]).toEqual([1, 1]);
  });

  it('when called again, then 204 and nothing changes', async () => {
    const gone = newCaller();
    const kept = newCaller();
    await seedFor(gone);
    await seedFor(kept);
    await deleteAccount(gone).expect(204);
    const total = [await h.notes.countDocuments(), await h.pending.countDocuments()];

    expect((await deleteAccount(gone)).status).toBe(204);
    expect([await h.notes.countDocuments(), await h.pending.countDocuments()]).toEqual(total);
  });

  it('when there is no token, then 401 and nothing is deleted', async () => {
    const caller = newCaller();
    await seedFor(caller);

    expect((await h.http.post('/internal/users/deleted')).status).toBe(401);
    expect([await notesOf(caller), await releasesOwedTo(caller)]).toEqual([1, 1]);
  });
});

describe("a deleted account's token, still valid", () => {
  it('when it creates a note, with or without an attachment, then 401 invalid-or-expired-token, nothing is written and the key is not claimed', async () => {
    const caller = await deletedCaller(h.http);
    const key = await upload(h, caller);
    const total = await h.notes.countDocuments();

    for (const body of [{ title: 'plain' }, { title: 'with file', attachmentKey: key }]) {
      const res = await h.http.post('/api/notes').set(caller.auth).send(body);
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'Invalid or expired token' });
    }
    expect(await h.notes.countDocuments()).toBe(total);
    // Files never saw a claim from notes: the key is still free (files was not told of the deletion here).
    expect((await claimAtFiles(caller, key)).status).toBe(200);
  });

  it('when it updates a note of theirs that the purge never saw, or attaches a file to it, then 401 and the note is unchanged', async () => {
    const caller = await deletedCaller(h.http);
    const id = await seedFor(caller);
    const key = await upload(h, caller);
    const before = await h.notes.findById(id).lean();

    for (const change of [{ title: 'changed' }, { attachmentKey: key }]) {
      const res = await h.http.put(`/api/notes/${id}`).set(caller.auth).send(change);
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'Invalid or expired token' });
    }
    expect(await h.notes.findById(id).lean()).toEqual(before);
    expect((await claimAtFiles(caller, key)).status).toBe(200);
  });

  it('when it reads or deletes, then nothing is looked up: its list and its note 200, a delete 204', async () => {
    const caller = await deletedCaller(h.http);
    const id = await seedFor(caller);

    const list = await h.http.get('/api/notes').set(caller.auth);
    expect(list.status).toBe(200);
    expect(list.body).toEqual([expect.objectContaining({ _id: id })]);
    expect((await h.http.get(`/api/notes/${id}`).set(caller.auth)).status).toBe(200);
    expect((await h.http.delete(`/api/notes/${id}`).set(caller.auth)).status).toBe(204);
    expect(await notesOf(caller)).toBe(0);
  });
});

describe('a note written while its account is being deleted', () => {
  it("when the whole deletion runs while the create waits for files' claim (after the first look, before the write), then the second look deletes the note and the answer is 401", async () => {
    const caller = newCaller();
    const other = newCaller();
    await seedFor(other);
    const key = await upload(h, caller);
    toFiles.before(
      (req) => req.url === '/internal/uploads/claim',
      async () => {
        await deleteAccount(caller).expect(204);
      },
    );

    const res = await h.http.post('/api/notes').set(caller.auth).send({ title: 'racing', attachmentKey: key });
    expect(toFiles.ran).toBe(true);
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'Invalid or expired token' });
    expect(await notesOf(caller)).toBe(0);
    expect(await h.notes.exists({ attachmentKey: key })).toBeNull();
    expect(await notesOf(other)).toBe(1);
  });
});
