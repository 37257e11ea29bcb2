/**
 * The unique key decides. FerretDB does not make a conditional write atomic: it reads the
 * document, checks the filter in memory and writes the whole document by `_id`, so two racers on
 * one `findOneAndUpdate` or filtered `updateOne` both "win". It does enforce unique indexes, as
 * MongoDB does. So whatever must go to exactly one taker (a token's single use, a slot, a record
 * claimed first) is claimed by inserting a document under a unique key: one insert succeeds, every
 * other gets a duplicate key (code 11000 on both servers) and knows the key is taken.
 */

/**
 * What FerretDB v1 answers for an update refused by a unique index: no 11000 but an internal error
 * (code 1) carrying its backend's refusal, PostgreSQL's SQLSTATE 23505 or SQLite's own words.
 */
const FERRETDB_UPDATE_DUPLICATE = /SQLSTATE 23505|UNIQUE constraint failed/;

/**
 * A write refused by a unique index: an insert on MongoDB or FerretDB (code 11000), an update on
 * MongoDB (11000) or on FerretDB (above).
 */
export function isDuplicateKey(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const { code, errmsg } = err as { code?: unknown; errmsg?: unknown };
  return code === 11000 || (code === 1 && typeof errmsg === 'string' && FERRETDB_UPDATE_DUPLICATE.test(errmsg));
}

/** Whether an unordered insert of several documents failed only on documents that were there already. */
export function onlyDuplicateKeys(err: unknown): boolean {
  if (isDuplicateKey(err)) return true;
  const writeErrors = (err as { writeErrors?: unknown } | null)?.writeErrors;
  return (
    Array.isArray(writeErrors) &&
    writeErrors.length > 0 &&
    writeErrors.every((e) => isDuplicateKey(e) || isDuplicateKey(e?.err))
  );
}

/**
 * Runs `insert` (an insert under a unique key): true when it claimed the key, false when a
 * document held it already (a racer's, or an earlier one's). Any other failure is thrown.
 */
export async function claimedByInsert(insert: () => Promise<unknown>): Promise<boolean> {
  try {
    await insert();
    return true;
  } catch (err) {
    if (isDuplicateKey(err)) return false;
    throw err;
  }
}

/**
 * Runs `upsert` (an update with `upsert: true`), and `again` once more when it lost a race to
 * create the document: two upserts of one `_id` at the same moment both find none and both
 * insert, and the second gets a duplicate key (FerretDB does not retry that itself). The second
 * try finds the document and updates it. `again` is the upsert itself unless told otherwise.
 */
export async function upsertRacing(upsert: () => Promise<unknown>, again = upsert): Promise<void> {
  try {
    await upsert();
  } catch (err) {
    if (!isDuplicateKey(err)) throw err;
    await again();
  }
}
