/**
 * Writes asked for together go to the database together, the way a database commits a group:
 * every item asked for within one turn of the event loop is sent in one operation, and each
 * caller's promise settles with its own item's outcome once that operation has answered.
 *
 * Under load, requests answered together ask for their next write together, and one operation
 * of many documents costs the database a fraction of as many operations of one: measured on
 * FerretDB on PostgreSQL, 0.2 ms of CPU per document in an `insertMany` of 10 against 0.7 ms in
 * 10 concurrent `insertOne`. A write asked for alone waits one turn (no timer) and goes alone.
 */
import mongoose, { type Model } from 'mongoose';
import { observed } from './observe';

/** One item's outcome in a batch: its value, or what failed it alone. */
export type Outcome<R> = { value: R } | { error: unknown };

/**
 * Runs `run` once per turn of the event loop, over every item asked for in that turn. `run`
 * answers one outcome per item, in their order; when it throws, every item of its batch fails
 * with that error.
 */
export function batchedByTurn<T, R>(run: (items: T[]) => Promise<Outcome<R>[]>): (item: T) => Promise<R> {
  let batch: { items: T[]; outcomes: Promise<Outcome<R>[]> } | undefined;
  return async (item) => {
    if (!batch) {
      const items: T[] = [];
      const outcomes = new Promise((resolve) => setImmediate(resolve)).then(() => {
        batch = undefined;
        return run(items);
      });
      batch = { items, outcomes };
    }
    const index = batch.items.push(item) - 1;
    const outcome = (await batch.outcomes)[index];
    if (!outcome) throw new Error(`a batch answered no outcome for its item ${index}`);
    if ('error' in outcome) throw outcome.error;
    return outcome.value;
  };
}

/** A model, as `insertTogether` uses it: any model's documents. */
type Insertable<D> = Pick<Model<unknown>, 'db' | 'collection'> & {
  insertMany(docs: D[], options: { ordered: false; throwOnValidationError: true }): Promise<unknown>;
};

/**
 * Inserts new documents of `model` together (`batchedByTurn`), in one unordered `insertMany`:
 * each is validated, stamped and inserted as `save` would, and one refused (a duplicate key, an
 * invalid field) fails only its own caller, with the error its own insert would have thrown. A
 * failure of the whole operation (the server away) fails each caller with the driver's own error,
 * not the bulk-write error that wraps it, so that it is told as the same 503.
 */
export function insertTogether<D>(model: Insertable<D>): (doc: D) => Promise<void> {
  return batchedByTurn<D, void>(async (docs) => {
    try {
      await observed(model, 'insertMany', () =>
        model.insertMany(docs, { ordered: false, throwOnValidationError: true }),
      );
      return docs.map(() => ({ value: undefined }));
    } catch (err) {
      const results = perDocument(err, docs.length);
      if (!results) throw unwrapped(err);
      return results.map((result) =>
        result === undefined || result instanceof mongoose.Document ? { value: undefined } : { error: asError(result) },
      );
    }
  });
}

/**
 * What each document came to, when the operation failed for some of them only: mongoose lists
 * the document itself where it was inserted, and the validation or write error where it was not.
 * Undefined when the operation failed as a whole (no write error and no validation error).
 */
function perDocument(err: unknown, count: number): unknown[] | undefined {
  const { results, writeErrors, validationErrors } = err as {
    results?: unknown[];
    writeErrors?: unknown[];
    validationErrors?: unknown[];
  };
  const someRefused = (writeErrors?.length ?? 0) > 0 || (validationErrors?.length ?? 0) > 0;
  if (!someRefused || !Array.isArray(results) || results.length !== count) return undefined;
  return results;
}

/** The driver's write error of one document, as the error its own insert throws. */
function asError(result: unknown): unknown {
  if (result instanceof Error) return result;
  const { code, errmsg, index, errInfo } = result as {
    code?: number;
    errmsg?: string;
    index?: number;
    errInfo?: unknown;
  };
  // Not the document (`op`), which the driver's write error carries: errors are logged.
  return new mongoose.mongo.MongoServerError({
    code,
    errmsg: errmsg ?? 'write failed',
    index,
    errInfo: errInfo as mongoose.mongo.Document | undefined,
  });
}

/** A driver error the bulk write wrapped (a lost connection, a server away) is told as itself. */
function unwrapped(err: unknown): unknown {
  const inner = (err as { errorResponse?: unknown } | null)?.errorResponse;
  return inner instanceof Error ? inner : err;
}
