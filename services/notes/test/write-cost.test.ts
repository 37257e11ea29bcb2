/**
 * What one write of a note costs the database, from its request to its event on the bus
 * (`countWriteCost`, @cs/testkit). A first write before each count takes what is done once per
 * process (indexes) out of it.
 */
import { countWriteCost, type WriteCost } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type NotesHarness, newCaller, startNotes } from './helpers';

let h: NotesHarness;
let cost: WriteCost;
const me = newCaller();

beforeAll(async () => {
  h = await startNotes(__filename);
  cost = countWriteCost(h.notes.db);
});
afterAll(async () => {
  await h.close();
});

/** Runs `write` and answers the operations it cost, up to its `count`th event on the bus with no entry left. */
function costOf(write: () => Promise<string>, count: number): Promise<string[]> {
  const entries = h.notes.db.db?.collection('note_events');
  return cost.of(
    write,
    async (id) => {
      const read = await h.events.bus.after('0-0', 10_000);
      const told = read.gap ? 0 : read.events.filter((e) => (e.data as { _id: string })._id === id).length;
      return told >= count && (await entries?.countDocuments({ noteId: id })) === 0;
    },
    (id) => `event ${count} of note ${id} on the bus, and no entry left`,
  );
}

const create = async () =>
  (await h.http.post('/api/notes').set(me.auth).send({ title: 'A note' }).expect(201)).body._id;

describe('what a write of a note costs the database', () => {
  it('when a note is created, then it costs its event’s entry and the note on the request’s path, and the entry’s deletion after', async () => {
    await costOf(create, 1);

    expect(await costOf(create, 1)).toEqual(['note_events.deleteMany', 'note_events.insertMany', 'notes.insertMany']);
  });

  it('when a note is edited, then it costs one read, the turn, the entry and the write, then the entry’s deletion: its order needs no look, as this process did its previous entry', async () => {
    const edit = (id: string) => async () => {
      await h.http.put(`/api/notes/${id}`).set(me.auth).send({ title: 'Edited' }).expect(200);
      return id;
    };
    await costOf(edit(await create()), 2);
    const id = await create();
    await costOf(async () => id, 1);

    expect(await costOf(edit(id), 2)).toEqual([
      'note_events.deleteMany',
      'note_events.insertMany',
      'notes.findOne',
      'notes.findOneAndUpdate',
      'turns.insertOne',
    ]);
  });
});
