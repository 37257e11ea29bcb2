import { overTheNetwork } from '@cs/lifecycle';
/**
 * Writes racing for one note, on two replicas of the notes service sharing the run's real
 * database (FerretDB by default, where a filtered update is not atomic): whatever the order, no
 * object is left in storage that no note holds, and the key a note holds is still there.
 */

import { setTimeout as sleep } from 'node:timers/promises';
import { api, captureLogger, eventually, TEST_JWT_SECRET, verifierWithoutRevocations } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import mongoose, { type Connection, Types } from 'mongoose';
import { createApp } from '../src/app';
import { createFilesClient, type FilesClient } from '../src/files-client';
import { noteModel, pendingReleaseModel } from '../src/model';
import { createReleaseOutbox } from '../src/release-outbox';
import { type NotesHarness, newCaller, startNotes, upload } from './helpers';

let h: NotesHarness;
let other: ReturnType<typeof api>;
const alice = newCaller();
const ROUNDS = Number(process.env.RACE_ROUNDS ?? 24);

beforeAll(async () => {
  h = await startNotes(__filename);
  const replica = await createApp({
    config: { JWT_SECRET: TEST_JWT_SECRET, FILES_URL: h.files.url, FILES_TIMEOUT: 2000, FILES_RETRY_WINDOW: 0 },
    connection: h.notes.db,
    logger: captureLogger('notes-replica').logger,
    tokens: verifierWithoutRevocations(),
    bus: h.events.bus,
    reach: overTheNetwork,
  });
  other = api(replica.app.callback());
}, 60_000);
afterAll(async () => {
  await h?.close();
});

/**
 * Runs the polls of `outboxes` (this replica's alone by default), as the service runs them, until
 * nothing is owed to files any more (the immediate attempts included).
 */
async function settle(outboxes: readonly { start(intervalMs: number): () => Promise<void> }[] = [h.outbox]) {
  const polls = outboxes.map((outbox) => outbox.start(50));
  try {
    await eventually(
      'nothing owed to files',
      () => h.pending.countDocuments(),
      (owed) => owed === 0,
      { timeoutMs: 10_000 },
    );
  } finally {
    await Promise.all(polls.map((stop) => stop()));
  }
  expect(await h.pending.countDocuments()).toBe(0);
}

const stored = async (key: string) => ((await h.bucket.headObject(key)) ? 'stored' : 'gone');

async function noteWith(key: string): Promise<string> {
  const res = await h.http.post('/api/notes').set(alice.auth).send({ title: 'racing', attachmentKey: key });
  expect(res.status).toBe(201);
  return res.body._id as string;
}

describe('writes racing for one note', () => {
  it(`when a delete races an update that swaps the key, then both keys are released whichever wins, ${ROUNDS} times in a row`, async () => {
    const seen: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const [k0, k1] = await Promise.all([upload(h, alice, 'old'), upload(h, alice, 'new')]);
      const id = await noteWith(k0);
      // The update first asks files to claim its key, so the delete starts 0-35 ms later to meet
      // it at every stage: before its read, between its read and its write, and after.
      const [put, del] = await Promise.all([
        h.http.put(`/api/notes/${id}`).set(alice.auth).send({ attachmentKey: k1 }),
        sleep((round % 8) * 5).then(() => other.delete(`/api/notes/${id}`).set(alice.auth)),
      ]);
      await settle();
      // The update may land first (200), find the note gone (404), or be told to try again (409).
      const putOutcome = [200, 404, 409].includes(put.status) ? 'ok' : put.status;
      seen.push(`put ${putOutcome}, delete ${del.status}: ${await stored(k0)} ${await stored(k1)}`);
    }
    expect(seen).toEqual(seen.map(() => 'put ok, delete 204: gone gone'));
  });

  it("when two updates swap a note's key at once, then both succeed, the note keeps the last one with its object, and the other two are released, 10 times in a row", async () => {
    const seen: string[] = [];
    for (let round = 0; round < 10; round++) {
      const [k0, k1, k2] = await Promise.all([upload(h, alice, 'k0'), upload(h, alice, 'k1'), upload(h, alice, 'k2')]);
      const id = await noteWith(k0);
      const [a, b] = await Promise.all([
        h.http.put(`/api/notes/${id}`).set(alice.auth).send({ attachmentKey: k1 }),
        other.put(`/api/notes/${id}`).set(alice.auth).send({ attachmentKey: k2 }),
      ]);
      await settle();
      const held = (await h.http.get(`/api/notes/${id}`).set(alice.auth)).body.attachmentKey as string;
      const dropped = [k0, k1, k2].filter((k) => k !== held);
      seen.push(
        `${a.status} ${b.status}, holds ${[k1, k2].includes(held) ? 'a new key' : held}: ${await stored(held)}, others ${(await Promise.all(dropped.map(stored))).join(' ')}`,
      );
    }
    expect(seen).toEqual(seen.map(() => '200 200, holds a new key: stored, others gone gone'));
  });

  it('when three replicas poll the same outbox at once, then every release is sent to files exactly once', async () => {
    const keys = await Promise.all(Array.from({ length: 15 }, (_, i) => upload(h, alice, `owed ${i}`)));
    for (const key of keys) await noteWith(key);
    // The notes are gone and their keys are owed to files, as after deletes whose immediate
    // attempts never ran (a restart, say).
    await h.notes.collection.deleteMany({ attachmentKey: { $in: keys } });
    for (const key of keys) await h.pending.create({ noteId: new Types.ObjectId(), ownerId: alice.id, key });

    const sent: string[] = [];
    const connections: Connection[] = [];
    const outboxes = [];
    for (let i = 0; i < 3; i++) {
      const connection = await mongoose.createConnection(h.dbUrl).asPromise();
      connections.push(connection);
      const real = createFilesClient({ baseUrl: h.files.url, fetch: overTheNetwork.fetch, timeoutMs: 2000 });
      // The real client, counting what it sends.
      const counting: FilesClient = {
        ...real,
        release: (key, authorization) => {
          sent.push(key);
          return real.release(key, authorization);
        },
      };
      outboxes.push(
        createReleaseOutbox({
          pending: pendingReleaseModel(connection),
          notes: noteModel(connection),
          files: counting,
          secret: TEST_JWT_SECRET,
          logger: captureLogger(`outbox-${i}`).logger,
        }),
      );
    }
    try {
      // Each replica's poll, as the service runs it: they find the entries due at the same moments.
      await settle(outboxes);

      expect([...sent].sort()).toEqual([...keys].sort());
      expect(await Promise.all(keys.map(stored))).toEqual(keys.map(() => 'gone'));
    } finally {
      await Promise.all(connections.map((c) => c.close()));
    }
  });
});
