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
 * - a turn must be taken within HOLD_MS of the read it follows, and its holder issues the write at
 *   once; that write lands, if at all, within LANDING_MS of the turn;
 * - a turn taken STALE_MS (> LANDING_MS) before a writer's read, and never written, belongs to a
 *   holder that died or gave up: anything it wrote landed before that read, so the writer skips
 *   past it to the version after (as many such turns as there are);
 * - a holder that is alive but whose write failed gives its turn back, in the background and
 *   until the server answers, unless a read then shows the write landed after all: it marks the
 *   turn as long stale. A request never waits for that.
 * And every write also names the version it read in its filter, and counts as not written when
 * that matched nothing: atomic on MongoDB, and on FerretDB it closes all but the inside of one
 * command, should a write land later than the bounds above allow (a paused server that resumes).
 * A decision that refuses the write (a post already published, say) is made in `check`, before
 * the turn, so a refusal never uses one up.
 *
 * Turns older than an hour are pruned, by one replica an hour (it inserts `prune@<hour>` first).
 * Every lookup here is by `_id`, which every server answers from its index.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { waitAside } from '@cs/lifecycle';
import type { Connection } from 'mongoose';
import { OPERATION_BOUND_MS } from './bounds';
import { raceBackoffMs } from './race-backoff';
import { claimedByInsert } from './unique-key';

/** How long after reading a version (the read included) its next turn may be taken. */
export const HOLD_MS = OPERATION_BOUND_MS + 1_000;
/** How long after its take a holder may issue its write (it does so at once: this is slack). */
const WRITE_MS = 1_000;
/**
 * The longest a holder's write can still land after its turn was taken: issued within WRITE_MS,
 * then a wait for a pooled connection and the operation itself, each up to OPERATION_BOUND_MS.
 */
const LANDING_MS = WRITE_MS + 2 * OPERATION_BOUND_MS;
/**
 * An unwritten turn taken this long before a writer's read belongs to a holder that died or gave
 * up: anything it wrote had landed before that read, so the writer may skip past it.
 */
export const STALE_MS = LANDING_MS + 2_000;
/** How often a give-back is tried again while the server does not answer. */
const GIVE_BACK_RETRY_MS = 250;
/** Turns older than this are deleted: long past any straggler's HOLD_MS. */
const KEEP_MS = 3_600_000;
/** How many times writeInTurn reads again after losing a turn: one per writer it may queue behind. */
const TRIES = 8;
/** How often a writer blocked by a silent holder looks again for its write or its turn going stale. */
const SILENT_POLL_MS = 250;

interface TurnDoc {
  _id: string;
  at: Date;
}

/** A document whose writes go through turns. Documents from before turns have no version: 0. */
export interface Versioned {
  version?: number | null;
}

export interface TurnSteps<D extends Versioned, T> {
  /** Reads the document; null when there is none (for this caller). */
  read(): Promise<D | null>;
  /**
   * The document as the caller already read it, and when that read began: the first try starts
   * from it instead of reading again. Later tries read.
   */
  known?: { doc: D; readAt: number };
  /** Refuses the write (throws) when the document as read does not allow it: before the turn. */
  check?(doc: D): void;
  /**
   * Writes the change, storing `version`, with the version read (`doc.version ?? null`) in its
   * filter; runs only while this caller holds that turn. Returns null when that filter matched
   * nothing: the document moved on (or is gone), and it is read again.
   */
  write(doc: D, version: number): Promise<T | null>;
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
   * Takes the turn after `version` (read at `readAt`) and runs `write` with the version to store
   * (`write` filters on the version read and returns null when that matched nothing). When `write`
   * fails or matched nothing, the turn is given back, unless `currentVersion()` shows it landed.
   * Returns the version written and what `write` returned, or undefined when it was not written.
   */
  advance<T>(
    subject: string,
    version: number,
    readAt: number,
    write: (version: number) => Promise<T | null>,
    currentVersion: () => Promise<number>,
  ): Promise<{ version: number; result: T } | undefined>;
  /**
   * When the turn after `version` of `subject` is held, the time at which it goes stale (it may be
   * now, for a turn given back); undefined when nobody holds it.
   */
  staleAt(subject: string, version: number): Promise<number | undefined>;
  /**
   * Reads, takes the next turn, and writes: the usual shape of one write to one document. A lost
   * turn means another writer got there first, so it reads again after a short pause (for that
   * write to land), up to 8 times. When one holder stayed silent through all of them, it most
   * likely died between its turn and its write (a killed process): the writer then waits, looking
   * every 250 ms, until that holder writes or its turn goes stale, and tries once more, rather
   * than refuse a write that will be possible within STALE_MS. It waits aside: a bulkhead place it
   * runs in serves other work meanwhile. A failed write gives its turn back.
   */
  writeInTurn<D extends Versioned, T>(subject: string, steps: TurnSteps<D, T>): Promise<T>;
  /** Deletes turns older than an hour, unless another replica is doing it this hour. */
  prune(): Promise<number>;
  /** Prunes every `intervalMs` (an hour by default); returns the function that stops it. */
  startPruning(intervalMs?: number): () => void;
}

/** The service's turns, in a collection of its database (`turns` unless named). */
export async function createTurns(connection: Connection, collectionName = 'turns'): Promise<Turns> {
  const turns = connection.collection<TurnDoc>(collectionName);
  await turns.createIndex({ at: 1 }); // the prune's query

  const self: Turns = {
    async take(subject: string, version: number, readAt: number): Promise<number | undefined> {
      for (let next = version + 1; Date.now() - readAt <= HOLD_MS; next++) {
        if (await claimedByInsert(() => turns.insertOne({ _id: `${subject}@${next}`, at: new Date() }))) return next;
        const holder = await turns.findOne({ _id: `${subject}@${next}` });
        // Gone (pruned), or taken too close to our read to be skipped: the caller reads again.
        if (!holder || holder.at.getTime() > readAt - STALE_MS) return undefined;
      }
      return undefined;
    },

    async staleAt(subject: string, version: number): Promise<number | undefined> {
      const holder = await turns.findOne({ _id: `${subject}@${version + 1}` });
      return holder ? holder.at.getTime() + STALE_MS : undefined;
    },

    async writeInTurn<D extends Versioned, T>(subject: string, steps: TurnSteps<D, T>): Promise<T> {
      let waitedForSilentHolder = false;
      let known = steps.known;
      for (let attempt = 1; ; attempt++) {
        const readAt = known?.readAt ?? Date.now();
        const doc = known ? known.doc : await steps.read();
        known = undefined;
        if (!doc) {
          await steps.giveUp?.();
          throw steps.missing();
        }
        steps.check?.(doc);
        const version = doc.version ?? 0;
        const currentVersion = async () => (await steps.read())?.version ?? 0;
        const done = await self.advance(subject, version, readAt, (v) => steps.write(doc, v), currentVersion);
        if (done) return done.result;
        if (attempt === TRIES) {
          const staleAt = waitedForSilentHolder ? undefined : await self.staleAt(subject, version);
          if (staleAt === undefined) {
            await steps.giveUp?.();
            throw steps.busy();
          }
          waitedForSilentHolder = true;
          // Aside: a bulkhead place this runs in serves other work meanwhile (@cs/lifecycle).
          await waitAside(async () => {
            while (Date.now() < staleAt && (await currentVersion()) === version) await sleep(SILENT_POLL_MS);
          });
          attempt = 0;
          continue;
        }
        await sleep(raceBackoffMs(attempt));
      }
    },

    async advance<T>(
      subject: string,
      version: number,
      readAt: number,
      write: (version: number) => Promise<T | null>,
      currentVersion: () => Promise<number>,
    ): Promise<{ version: number; result: T } | undefined> {
      const next = await self.take(subject, version, readAt);
      if (next === undefined) return undefined;
      const landed = async () => (await currentVersion()) >= next;
      let result: T | null;
      try {
        result = await write(next);
      } catch (err) {
        void self.giveBack(subject, next, landed);
        throw err;
      }
      if (result === null) {
        void self.giveBack(subject, next, landed);
        return undefined;
      }
      return { version: next, result };
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
      // Taken already: another replica prunes this hour.
      if (!(await claimedByInsert(() => turns.insertOne({ _id: `prune@${hour}`, at: new Date(now) })))) return 0;
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
