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
 * Time bounds keep this safe when a holder dies between its turn and its write (SIGKILL), or its
 * write fails:
 * - a turn must be taken within HOLD_MS of reading the version it follows;
 * - its holder issues the write at once (within WRITE_MS of the take), and one operation ends
 *   within OPERATION_BOUND_MS (see bounds.ts);
 * - a turn older than STALE_MS whose version was never written belongs to a holder that died or
 *   gave up: the next writer skips past it to the version after. STALE_MS > HOLD_MS + WRITE_MS +
 *   OPERATION_BOUND_MS: a writer that sees such a turn read the document after any write of that
 *   holder's could have landed, so skipping past it never overwrites a write it did not read.
 * - a holder that is alive but whose write failed (a timeout, the server gone) gives its turn
 *   back, in the background and until the server answers, unless a read then shows the write
 *   landed after all: it marks the turn as long stale, and the next writer skips past it at once.
 *   A request never waits for that.
 *
 * Turns older than an hour are pruned, by one replica at a time (the pruner takes a turn too).
 * Every lookup here is by `_id`, which every server answers from its index.
 */
import type { Connection } from 'mongoose';
import { OPERATION_BOUND_MS } from './bounds';

/** How long after reading a version (the read included) its next turn may be taken. */
export const HOLD_MS = OPERATION_BOUND_MS + 1_000;
/** How long after its take a holder may issue its write (it does so at once: this is slack). */
const WRITE_MS = 1_000;
/** When an unwritten turn is taken to belong to a holder that died or gave up. */
export const STALE_MS = HOLD_MS + WRITE_MS + OPERATION_BOUND_MS + 2_500;
/** How often a give-back is tried again while the server does not answer. */
const GIVE_BACK_RETRY_MS = 250;
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
   * it at once), unless `landed()` finds that version written after all. Runs in the background:
   * tried again every 250 ms while the server does not answer, until the turn is stale anyway.
   * Never throws; the promise (for tests) settles when it is done.
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
            void self.giveBack(subject, version, async () => ((await steps.read())?.version ?? 0) >= version);
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
      const until = Date.now() + STALE_MS;
      while (Date.now() < until) {
        try {
          if (await landed()) return;
          await turns.updateOne({ _id: `${subject}@${version}` }, { $set: { at: new Date(0) } });
          return;
        } catch {
          await sleep(GIVE_BACK_RETRY_MS);
        }
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
