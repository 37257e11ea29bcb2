/**
 * Aborting a completed multipart upload while a note claims its key: exactly one of them wins, on
 * the run's real database (FerretDB by default, where a filtered update is not atomic), with the
 * two requests on two replicas.
 */
import { openTestDatabase, type TestDatabase } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type FilesHarness, newCaller, startFiles, uploadInOnePart } from './helpers';

const TRIES = 12;
let db: TestDatabase;
let a: FilesHarness;
let b: FilesHarness;
const owner = newCaller();

beforeAll(async () => {
  db = await openTestDatabase(__filename);
  a = await startFiles(__filename, {}, db);
  b = await startFiles(__filename, {}, db);
});
afterAll(async () => {
  await a.close();
  await b.close();
  await db.drop();
});

/** A multipart upload of one small part, sent and completed: an unclaimed key. */
const completedUpload = () =>
  uploadInOnePart(a, owner, 'one small part', { contentType: 'application/zip', filename: 'a.zip' });

describe('DELETE /multipart-uploads/:id racing a claim of its key', () => {
  it(`when an abort and a claim of a completed upload arrive at once, then exactly one succeeds and the outcome matches it, in each of ${TRIES} tries`, async () => {
    const outcomes: string[] = [];
    for (let i = 0; i < TRIES; i++) {
      const { uploadId, key } = await completedUpload();

      const [abort, claim] = await Promise.all([
        a.http.delete(`/multipart-uploads/${uploadId}`).set(owner.auth),
        b.http.post('/internal/uploads/claim').set(owner.auth).send({ key }),
      ]);

      const record = await a.model.findOne({ key }).lean();
      const object = await a.bucket.headObject(key);
      if (claim.status === 200) {
        // The claim won: the note's key stays, with its object.
        outcomes.push(`claim ${abort.status} ${record?.state} ${object ? 'kept' : 'deleted'}`);
      } else {
        outcomes.push(`abort ${abort.status} ${claim.status} ${record?.state} ${object ? 'kept' : 'deleted'}`);
      }
    }
    const allowed = ['claim 409 attached kept', 'abort 204 409 released deleted'];
    expect(outcomes.filter((outcome) => !allowed.includes(outcome))).toEqual([]);
  });
});
