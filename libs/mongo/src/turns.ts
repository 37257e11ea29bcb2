/**
 * Turns: one writer per version of a document, on every MongoDB-protocol server we run.
 *
 * Our guarantees (a key attached once, a release done by one worker, a post published once, a
 * note's attachment never lost to a concurrent write) need a conditional write that hands a
 * document to exactly one taker. MongoDB's filtered `findOneAndUpdate` does that. FerretDB's does
 * not: it reads the document, checks the filter in memory and then writes the whole document by
 * `_id`, so two racers on `{_id, state: 'issued'}` both "win", and a write of one field can undo a
 * concurrent write of another. Both servers enforce unique indexes, and `_id` is one.
 *
 * So every document whose writes must not race carries a `version`, and a writer that read
 * version v first inserts the turn `<subject>@<v+1>` here. The insert is the decision: one
 * inserter succeeds, the others get a duplicate key and go back to read again. Only the turn's
 * holder writes the document, and it writes `version: v+1` with its change, which is where the
 * next writer's turn comes from.
 *
 * Two time bounds keep this safe when a holder dies between its turn and its write (SIGKILL):
 * - a turn must be taken within HOLD_MS of reading the version it follows, and the holder writes
 *   right after taking it (each operation is itself bounded by the driver's timeouts);
 * - a turn older than STALE_MS whose version was never written belongs to a dead holder: the next
 *   writer skips past it to the version after. STALE_MS > 2 × HOLD_MS + the operation bound, so a
 *   holder that is only slow has given up (it never writes outside HOLD_MS) long before then.
 * A holder that is alive but whose write failed (a timeout under load, say) gives its turn back,
 * unless a fresh read shows the write landed after all: it marks the turn as long stale, and the
 * next writer skips past it at once instead of being refused for STALE_MS.
 *
 * Turns older than an hour are pruned, by one replica at a time (the pruner takes a turn too).
 * Every lookup here is by `_id`, which every server answers from its index.
 */
import type { Connection } from 'mongoose';

/** How long after reading a version its next turn may be taken. */
export const HOLD_MS = 10_000;
/** When an unwritten turn is taken to belong to a holder that died. */
export const STALE_MS = 30_000;
/** Turns older than this are deleted: long past any straggler's HOLD_MS. */
const KEEP_MS = 3_600_000;
/** How many dead holders in a row one take will skip before it gives up. */
const MAX_SKIPS = 5;
/** How many times writeInTurn reads again after losing a turn: one per writer it may queue behind. */
const TRIES = 8;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface TurnDoc {
  _id: string;
  at: Date;
}

/** A document whose writes go through turns. Documents from before turns have no version: 0. */
export interface Versioned {
  version?: number;
}

export interface TurnSteps<D extends Versioned, T> {
  /** Reads the document; null when there is none (for this caller). */
  read(): Promise<D | null>;
  /** Writes the change, storing `version`; runs only while this caller holds that turn. */
  write(doc: D, version: number): Promise<T>;
  /** The error when there is no document. */
  missing(): Error;
  /** The error when other writers kept the turn through every try. */
  busy(): Error;
  /** Runs before `missing` or `busy` is thrown: undo what the caller did before its turn. */
  giveUp?(): Promise<void>;
}

export interface Turns {
  /**
   * Takes the turn after `version` of `subject`, which the caller read at `readAt`. Returns the
   * version the caller may now write (version + 1, or more past a dead holder's turn), or
   * undefined when another writer has it or the read is older than HOLD_MS: read again.
   */
  take(subject: string, version: number, readAt: number): Promise<number | undefined>;
  /**
   * After the holder's write of `version` failed: gives the turn back (the next writer skips past
   * it at once), unless `landed()` finds that version written after all. Never throws: a turn it
   * could not give back goes stale after STALE_MS anyway.
   */
  giveBack(subject: string, version: number, landed: () => Promise<boolean>): Promise<void>;
  /**
   * Reads, takes the next turn, and writes: the usual shape of one write to one document. A lost
   * turn means another writer got there first, so it reads again after a short pause (for that
   * write to land), up to 8 times. A failed write gives its turn back.
   */
  writeInTurn<D extends Versioned, T>(subject: string, steps: TurnSteps<D, T>): Promise<T>;
  /** Deletes turns older than an hour, unless another replica is doing it this hour. */
  prune(): Promise<number>;
  /** Prunes every `intervalMs` (an hour by default); returns the function that stops it. */
  startPruning(intervalMs?: number): () => void;
}

function isDuplicateKey(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === 11000;
}

/** The service's turns, in a collection of its database (`turns` unless named). */
export async function createTurns(connection: Connection, collectionName = 'turns'): Promise<Turns> {
  const turns = connection.collection<TurnDoc>(collectionName);
  await turns.createIndex({ at: 1 }); // the prune's query

  const self: Turns = {
    async take(subject: string, version: number, readAt: number): Promise<number | undefined> {
      for (let next = version + 1; next <= version + 1 + MAX_SKIPS; next++) {
        if (Date.now() - readAt > HOLD_MS) return undefined;
        try {
          await turns.insertOne({ _id: `${subject}@${next}`, at: new Date() });
          return next;
        } catch (err) {
          if (!isDuplicateKey(err)) throw err;
        }
        const holder = await turns.findOne({ _id: `${subject}@${next}` });
        // Gone (pruned) or alive: either way not ours now; the caller reads again.
        if (!holder || Date.now() - holder.at.getTime() < STALE_MS) return undefined;
      }
      return undefined;
    },

    async writeInTurn<D extends Versioned, T>(subject: string, steps: TurnSteps<D, T>): Promise<T> {
      for (let attempt = 1; ; attempt++) {
        const readAt = Date.now();
        const doc = await steps.read();
        if (!doc) {
          await steps.giveUp?.();
          throw steps.missing();
        }
        const version = await self.take(subject, doc.version ?? 0, readAt);
        if (version !== undefined) {
          try {
            return await steps.write(doc, version);
          } catch (err) {
            await self.giveBack(subject, version, async () => ((await steps.read())?.version ?? 0) >= version);
            throw err;
          }
        }
        if (attempt === TRIES) {
          await steps.giveUp?.();
          throw steps.busy();
        }
        // Jittered, so writers that lost together do not collide again in step.
        await sleep(Math.min(10 * 2 ** attempt, 200) * (0.5 + Math.random()));
      }
    },

    async giveBack(subject: string, version: number, landed: () => Promise<boolean>): Promise<void> {
      try {
        if (await landed()) return;
        await turns.updateOne({ _id: `${subject}@${version}` }, { $set: { at: new Date(0) } });
      } catch {
        // The turn goes stale after STALE_MS instead.
      }
    },

    async prune(): Promise<number> {
      const now = Date.now();
      const hour = Math.floor(now / KEEP_MS);
      if ((await self.take('prune', hour, now)) === undefined) return 0;
      const { deletedCount } = await turns.deleteMany({ at: { $lt: new Date(now - KEEP_MS) } });
      return deletedCount;
    },

    startPruning(intervalMs = KEEP_MS): () => void {
      const timer = setInterval(() => void self.prune().catch(() => undefined), intervalMs);
      timer.unref();
      return () => clearInterval(timer);
    },
  };
  return self;
}
