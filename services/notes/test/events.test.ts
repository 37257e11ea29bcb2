/**
 * The change events of notes on the bus (a Redis stream of this test's own): each write is told
 * to its author, in order, and a write whose process died before telling is still told.
 */
import type { StoredEvent } from '@cs/event-bus';
import { eventually } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type NotesHarness, newCaller, startNotes } from './helpers';

let h: NotesHarness;
const me = newCaller();

beforeAll(async () => {
  h = await startNotes(__filename);
});
afterAll(async () => {
  await h.close();
});

async function eventsOf(noteId: string, count: number): Promise<StoredEvent[]> {
  return eventually(
    `${count} events about note ${noteId}`,
    async () => {
      const read = await h.events.bus.after('0-0', 10_000);
      return read.gap ? [] : read.events.filter((e) => (e.data as { _id: string })._id === noteId);
    },
    (events) => events.length >= count,
  );
}

describe('what a write of a note tells', () => {
  it('when a note is created, edited and deleted, then its author’s notes topic gets upsert, upsert, remove, each the note as GET answers it', async () => {
    const created = await h.http.post('/api/notes').set(me.auth).send({ title: 'First' }).expect(201);
    const id = created.body._id as string;
    await eventsOf(id, 1);
    const edited = await h.http.put(`/api/notes/${id}`).set(me.auth).send({ title: 'Second' }).expect(200);
    await eventsOf(id, 2);
    await h.http.delete(`/api/notes/${id}`).set(me.auth).expect(204);

    const events = await eventsOf(id, 3);
    expect(events.map((e) => `${e.topic}.${e.kind}`)).toEqual(['notes.upsert', 'notes.upsert', 'notes.remove']);
    expect(events.every((e) => e.owner === me.id)).toBe(true);
    expect(events[0]?.data).toEqual(created.body);
    expect(events[1]?.data).toEqual(edited.body);
    expect(events[2]?.data).toEqual({ _id: id });
  });

  it('when the entry was written and the write landed, but the process died before telling, then the outbox’s next pass tells it', async () => {
    const created = await h.http.post('/api/notes').set(me.auth).send({ title: 'Before' }).expect(201);
    const id = created.body._id as string;
    await eventsOf(id, 1);
    // As a process that wrote its entry and the note, and died before trying the entry.
    await h.noteEvents.record(id, me.id, 1);
    await h.notes.updateOne({ _id: id }, { $set: { title: 'After', version: 1 } });

    // The service's poller, as a process that is still alive runs it: it finds the entry once no
    // dispatch took it.
    const stopPolling = h.noteEvents.start(20);
    try {
      const events = await eventsOf(id, 2);
      expect(events[1]).toMatchObject({ topic: 'notes', kind: 'upsert', data: { _id: id, title: 'After' } });
    } finally {
      await stopPolling();
    }
  });
});
