/**
 * Documents that each belong to one user, changed one version at a time: a domain says "update
 * this note if the caller owns it" or "delete it", and this does it.
 *
 * Why not one filtered update: FerretDB's `findOneAndUpdate({_id, authorId, …})` reads the
 * document, checks the filter in memory and writes the whole document back by `_id`, so of two
 * writers both may "win", and one silently undoes the other's change. Both servers enforce unique
 * indexes, so a write first takes its version's turn (turns.ts: an insert only one writer wins),
 * then writes filtered on the version it read; a writer that loses reads again and decides afresh
 * from what it finds. On MongoDB the filter alone would do; the turn costs one insert there.
 */
import type { Model, QueryFilter, UpdateQuery } from 'mongoose';
import type { Turns, Versioned } from './turns';

/** What to write: fields to set, and fields to remove. */
export interface Change<D> {
  set: Partial<D>;
  unset?: ReadonlyArray<keyof D & string>;
}

export interface OwnedDocuments<D> {
  /** The owner's document `id`; null when there is none, or it is someone else's. */
  find(id: string, ownerId: string): Promise<D | null>;
  /**
   * Writes what `change` makes of the document as it is now, if `ownerId` owns it. `change` runs
   * on every fresh read (again after losing to another writer) and before any write: it may throw
   * to refuse, or return undefined when there is nothing to write. `prepare` runs right before the
   * write, with the document as read, the change and the version about to be written (again after
   * a lost turn), so that what must outlive the write (an outbox entry) is written first. Returns
   * the document before and after the write, and what `prepare` returned (undefined when nothing
   * was written); throws `missing()` when the owner has no such document, and `busy()` when other
   * writers kept it through every try. `known`, the document as the caller found it (`find`) and
   * when that read began, spares the first try its read.
   */
  update<P = undefined>(
    id: string,
    ownerId: string,
    change: (current: D) => Change<D> | undefined,
    prepare?: (current: D, change: Change<D>, version: number) => Promise<P>,
    known?: { doc: D; readAt: number },
  ): Promise<{ before: D; after: D; prepared?: P }>;
  /**
   * Deletes the owner's document `id`. `prepare` runs first with the version about to go (again
   * after a lost turn), so that what must outlive the document (an outbox entry) is written before
   * it goes. Returns the deleted document and what `prepare` returned; undefined when there was
   * none. Throws `busy()` when other writers kept it through every try.
   */
  remove<P>(
    id: string,
    ownerId: string,
    prepare?: (current: D) => Promise<P>,
  ): Promise<{ removed: D; prepared: P | undefined } | undefined>;
}

/** The document was not there: `remove` answers undefined. */
class Absent extends Error {}
/** `change` found nothing to write: no turn is taken. */
class Unchanged<D> extends Error {
  constructor(readonly doc: D) {
    super('unchanged');
  }
}

export function ownedDocuments<D extends Versioned>(
  model: Model<D>,
  turns: Turns,
  {
    subject,
    owner,
    fields,
    missing,
    busy,
  }: {
    /** The turns' name for one document: `<subject>:<id>`. */
    subject: string;
    /** The field that names the owner. */
    owner: keyof D & string;
    /** The projection of every read (all fields when absent). */
    fields?: string;
    /** The error when the owner has no such document. */
    missing: () => Error;
    /** The error when other writers kept the document through every try. */
    busy: () => Error;
  },
): OwnedDocuments<D> {
  const find = (id: string, ownerId: string) =>
    model.findOne({ _id: id, [owner]: ownerId } as QueryFilter<D>, fields).lean<D>() as Promise<D | null>;
  const sameVersion = (id: string, current: D) => ({ _id: id, version: current.version ?? null }) as QueryFilter<D>;

  return {
    find,

    async update<P>(
      id: string,
      ownerId: string,
      change: (current: D) => Change<D> | undefined,
      prepare?: (current: D, change: Change<D>, version: number) => Promise<P>,
      known?: { doc: D; readAt: number },
    ) {
      let planned: Change<D> = { set: {} };
      let before: D | undefined;
      let prepared: P | undefined;
      try {
        const after = await turns.writeInTurn<D, D>(`${subject}:${id}`, {
          read: () => find(id, ownerId),
          known,
          check(current) {
            const wanted = change(current);
            if (!wanted) throw new Unchanged(current);
            planned = wanted;
          },
          async write(current, version) {
            before = current;
            prepared = await prepare?.(current, planned, version);
            const unset = planned.unset?.length ? { $unset: Object.fromEntries(planned.unset.map((f) => [f, 1])) } : {};
            const update = { $set: { ...planned.set, version }, ...unset } as UpdateQuery<D>;
            // No projection: FerretDB does not implement it on findAndModify.
            const written = await model
              .findOneAndUpdate(sameVersion(id, current), update, { returnDocument: 'after' })
              .lean<D>();
            return (written as D | null) ?? null;
          },
          missing,
          busy,
        });
        return { before: before as D, after, prepared };
      } catch (err) {
        if (err instanceof Unchanged) return { before: err.doc as D, after: err.doc as D };
        throw err;
      }
    },

    async remove<P>(id: string, ownerId: string, prepare?: (current: D) => Promise<P>) {
      try {
        return await turns.writeInTurn<D, { removed: D; prepared: P | undefined }>(`${subject}:${id}`, {
          read: () => find(id, ownerId),
          async write(current) {
            const prepared = await prepare?.(current);
            const { deletedCount } = await model.deleteOne(sameVersion(id, current));
            // Not deleted: the document moved on, and is read again. What `prepare` wrote stays.
            return deletedCount === 0 ? null : { removed: current, prepared };
          },
          missing: () => new Absent(),
          busy,
        });
      } catch (err) {
        if (err instanceof Absent) return undefined;
        throw err;
      }
    },
  };
}
