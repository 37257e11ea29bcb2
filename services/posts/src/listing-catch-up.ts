/**
 * How fresh the listing (listing.ts) is when it answers a read, and how it gets so: this replica's
 * listing, caught up with the log (listing-log.ts) of every change acknowledged anywhere.
 *
 * Reads do not each wait for a lookup: a catch-up that began less than FRESH_MS before a read
 * arrived answers it, and every change waits FRESH_MS after its entry is logged before it is
 * acknowledged (`settled`). A read that arrives after a change was acknowledged arrives more than
 * FRESH_MS after its entry was logged, so the catch-up that answers it began after the entry was
 * there, on any replica: only durations are compared, each on one machine's clock. A read that
 * finds the last catch-up past half its window starts the next one in the background and is
 * answered at once, so under steady load no read waits for the log: a replica looks at it every
 * REFRESH_AFTER_MS or so, whatever its reads, and idle, not at all. A read that finds no catch-up
 * recent enough joins the one under way if it began within the window, else waits for the next.
 *
 * The listing is read whole again when it is MAX_AGE_MS old, in the background while reads go on
 * (a change whose entry was never written, the database having failed between the two writes, is
 * seen within that; at twice that age reads wait for it), when the log says anything may have
 * changed (`markListingChanged`, after a write around the service: the kept texts go too), and
 * when more than CATCH_UP_MAX entries came since the last read.
 */
import { ListingIndex, PLACED_FIELDS, type PlacedRecord } from './listing-index';
import type { Change, ListingLog } from './listing-log';
import type { PostModel, PostRecord } from './model';

/**
 * How long a catch-up answers reads for, and so how long every change to a published post waits,
 * once logged, before it is acknowledged. Under load a replica looks at the log this often.
 */
export const FRESH_MS = 20;
/** Past this age, a read starts the next catch-up in the background (see FRESH_MS). */
export const REFRESH_AFTER_MS = FRESH_MS / 2;
/** The listing is read whole again after this long, whatever the log says (see RETAIN_MS). */
export const MAX_AGE_MS = 30_000;
/** Past this many changes since the last read, reading the whole listing is cheaper. */
const CATCH_UP_MAX = 256;

export interface State {
  index: ListingIndex;
  /** The last log entry applied, and every one before it. */
  seq: number;
  /** Entries past `seq` that this replica's own writes applied already. */
  applied: Set<number>;
  /** When the read of the whole listing began. */
  readAt: number;
  /** When the last catch-up that brought it up to date began (performance.now()). */
  checkedAt: number;
}

export interface CatchUp {
  /** The listing, caught up with every change acknowledged anywhere before this call. */
  caughtUp(): Promise<State>;
  /** This replica's own write, as it left the post (logged as `seq`): no need to read it again to catch up. */
  applyOwn(seq: number, change: Change, written: PostRecord | null | undefined): void;
}

/**
 * Resolves FRESH_MS after `loggedAt`, when no replica answers a read from a catch-up that began
 * before the entry logged then was there.
 */
export async function settled(loggedAt: number): Promise<void> {
  for (
    let left = FRESH_MS - (performance.now() - loggedAt);
    left > 0;
    left = FRESH_MS - (performance.now() - loggedAt)
  ) {
    // Timers count whole milliseconds and may fire a little early: look at the clock again.
    await new Promise((resolve) => setTimeout(resolve, Math.ceil(left)));
  }
}

/**
 * `readPost`: one post's state, read now. `applyRead`: applies such a state to the index and to
 * what is kept beside it (texts, words). `removeAuthor`: the same for an author's removal.
 * `forgetTexts`: the kept texts go (anything may have changed). `follow`: brings the words kept
 * beside the index to a whole read (`fresh`: from nothing), in the background.
 */
export function createCatchUp({
  posts,
  log,
  readPost,
  applyRead,
  removeAuthor,
  forgetTexts,
  follow,
}: {
  posts: PostModel;
  log: ListingLog;
  readPost: (id: string) => Promise<PostRecord | null>;
  applyRead: (index: ListingIndex, id: string, record: PostRecord | null) => boolean;
  removeAuthor: (index: ListingIndex, authorId: string) => void;
  forgetTexts: () => void;
  follow: (records: PlacedRecord[], before: ListingIndex | undefined, fresh: boolean) => Promise<void>;
}): CatchUp {
  let state: State | undefined;

  /**
   * `fresh`: the texts kept may not be current, though their versions say so (anything may have
   * changed around the service): they go too.
   */
  async function readWhole({ fresh }: { fresh: boolean }): Promise<State> {
    const readAt = Date.now();
    const checkedAt = performance.now();
    const seq = await log.head();
    const records = await posts.find({ status: 'published' }, PLACED_FIELDS).lean<PlacedRecord[]>();
    if (fresh) forgetTexts();
    // The words follow in the background: searches wait for them, pages do not (listing-search.ts).
    follow(records, state?.index, fresh).catch(() => undefined);
    state = { index: new ListingIndex(records), seq, applied: new Set(), readAt, checkedAt };
    return state;
  }

  /**
   * The periodic read of the whole listing, while reads go on from the current one: it replaces
   * it when done, and catching up from its older entry again applies nothing twice.
   */
  let rereading = false;
  function rereadInBackground(): void {
    if (rereading) return;
    rereading = true;
    readWhole({ fresh: false })
      .catch(() => undefined) // the next read tries again; the current listing is caught up meanwhile
      .finally(() => {
        rereading = false;
      });
  }

  /** Entries up to `seq` are applied: so is every one after it that this replica's writes applied. */
  function advance(current: State, seq: number): void {
    current.seq = Math.max(current.seq, seq);
    while (current.applied.has(current.seq + 1)) current.seq += 1;
    for (const applied of current.applied) if (applied <= current.seq) current.applied.delete(applied);
  }

  async function catchUp(): Promise<State> {
    const began = performance.now();
    const current = state;
    const age = current ? Date.now() - current.readAt : Number.POSITIVE_INFINITY;
    if (!current || age > 2 * MAX_AGE_MS) return readWhole({ fresh: false });
    if (age > MAX_AGE_MS) rereadInBackground();
    const entries = await log.after(current.seq, CATCH_UP_MAX);
    if (entries === null) return readWhole({ fresh: false });
    if (entries.some(({ changes }) => changes.some((change) => 'all' in change))) return readWhole({ fresh: true });
    if (entries.length === 0) return checked(current, began);

    const changedPosts = new Set<string>();
    for (const change of entries.flatMap(({ changes }) => changes)) {
      if ('authorId' in change) removeAuthor(current.index, change.authorId);
      if ('postId' in change) changedPosts.add(change.postId);
    }
    const ids = [...changedPosts];
    const records = await Promise.all(ids.map(readPost));
    for (const [i, id] of ids.entries()) applyRead(current.index, id, records[i] ?? null);
    advance(current, (entries.at(-1) as { seq: number }).seq);
    return checked(current, began);
  }

  function checked(current: State, began: number): State {
    current.checkedAt = Math.max(current.checkedAt, began);
    return current;
  }

  // One catch-up runs at a time; a read that arrives meanwhile joins it if it began within the
  // window, or else waits for the next one. When the one under way fails (the database is down or
  // silent), those waiting fail with it, at once: a second try in a row would only double their
  // wait for the same answer.
  let running: Promise<State> | undefined;
  let runningBegan = Number.NEGATIVE_INFINITY;
  let queued: Promise<State> | undefined;

  function run(): Promise<State> {
    const started = catchUp().finally(() => {
      if (running === started) running = undefined;
    });
    running = started;
    runningBegan = performance.now();
    return started;
  }

  return {
    caughtUp() {
      const now = performance.now();
      if (state && now - state.checkedAt < FRESH_MS) {
        // A failed background catch-up is tried again by the next read.
        if (now - state.checkedAt >= REFRESH_AFTER_MS && !running) run().catch(() => undefined);
        return Promise.resolve(state);
      }
      if (running && now - runningBegan < FRESH_MS) return running;
      if (!running) return run();
      queued ??= running.then(
        () => {
          queued = undefined;
          return run();
        },
        (err: unknown) => {
          queued = undefined;
          throw err;
        },
      );
      return queued;
    },

    applyOwn(seq, change, written) {
      const current = state;
      if (!current) return;
      // Anything may have changed: the next read reads it all (the entry may also hold other
      // writers' changes, which they mark applied).
      if ('all' in change) {
        if (state === current) state = undefined;
        return;
      }
      if ('authorId' in change) removeAuthor(current.index, change.authorId);
      if ('postId' in change && written !== undefined) applyRead(current.index, change.postId, written);
      else if (!('authorId' in change)) return;
      current.applied.add(seq);
      advance(current, current.seq);
    },
  };
}
