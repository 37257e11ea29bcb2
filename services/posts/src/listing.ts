/**
 * The public list, kept in this process and caught up, on every read, with every change
 * acknowledged anywhere before that read began.
 *
 * Why. Neither FerretDB backend sends sort, skip or limit down to its database, and a count
 * decodes every matching document: on FerretDB reading a page of the public list costs time in
 * proportion to the posts stored (80 ms of FerretDB's CPU at 10,000 posts, on PostgreSQL). Kept
 * pages that a change throws away let one account that flips its post between draft and
 * published make every reader pay that, many times a second.
 *
 * How. The listing's order is held in memory (listing-index.ts): read whole once, then patched.
 * It is kept newest first, by title, and per author, so every filter and order of the list (`tag`,
 * `author`, `sort`) is cut from it, with the same freshness, and none is a query of its own.
 * Every change to a published post is logged after it is written and before it is acknowledged
 * (listing-log.ts: numbered without gaps). A read first looks up the entry after the last one this
 * process applied: almost always missing, one lookup by `_id`. Otherwise it reads each changed
 * post by `_id` and applies it. A change made through this replica is applied by its writer, from
 * the post as the write returned it, so this replica's readers do not even read it again. So a change costs every replica one lookup of one post, and a page
 * costs the lookups of the posts on it whose text is not kept.
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
 * A published post read by its id is served the same way (`published`): caught up, then from the
 * kept texts, so an unpublish or a delete acknowledged anywhere is never answered from memory.
 *
 * The listing is read whole again when it is MAX_AGE_MS old, in the background while reads go on
 * (a change whose entry was never written, the database having failed between the two writes, is
 * seen within that; at twice that age reads wait for it), when the log says anything may have
 * changed (`markListingChanged`, after a write around the service: the kept texts go too), and
 * when more than CATCH_UP_MAX entries came since the last read.
 */
import type { Bulkhead } from '@cs/koa';
import type { Connection } from 'mongoose';
import { type ListFilter, ListingIndex, PLACED_FIELDS, type Placed, type PlacedRecord } from './listing-index';
import { type Change, createListingLog, type ListingLog } from './listing-log';
import { POST_FIELDS, type Post, type PostModel, type PostRecord, toPost } from './model';
import type { PostSort } from './terms';

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
/** About the memory the kept texts may take, in characters of titles and bodies. */
const TEXT_BUDGET_CHARS = 4_000_000;
/** A page whose posts change while it is cut is cut again, this many times at most. */
const CUTS = 5;

/** Which page: `offset` and `limit` into the listed posts of the filter, in `sort` (default newest). */
export interface PageQuery extends ListFilter {
  offset: number;
  limit: number;
  /** Newest first (the contract's), oldest first, or by title. */
  sort?: PostSort;
}

export interface ListedPage {
  posts: Post[];
  total: number;
}

export interface Listing {
  /**
   * The posts at `offset` (up to `limit`) in `sort`, of `tag` and of `authorId` when given, and how
   * many of those are listed in all.
   */
  page(query: PageQuery, client: string): Promise<ListedPage>;
  /**
   * The post, when it is published as of every change acknowledged before this read began, from
   * the kept texts when they hold it at its version; undefined when it is not listed (a draft, a
   * deleted post, no such post, or one the listing has not seen yet): the caller reads it then.
   */
  published(id: string, client: string): Promise<Post | undefined>;
  /**
   * Call after a change to a published post is written, before it is acknowledged. `written`: the
   * post as the write left it (null: deleted), applied to this replica's listing at once.
   * Resolves FRESH_MS after the change is logged, when every replica's next read shows it.
   */
  changed(change: Change, written?: PostRecord | null): Promise<void>;
}

interface State {
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

interface KeptText {
  version: number;
  post: Post;
  chars: number;
}

const FIELDS = `${POST_FIELDS} version`;

/** The posts at `offset`, up to `limit`, of `list` (newest first, or by title) read in `sort`. */
function sliceOf(list: readonly Placed[], offset: number, limit: number, sort: PostSort): Placed[] {
  if (sort !== 'oldest') return list.slice(offset, offset + limit);
  // Oldest first is newest first from the end: the same pages, each read backwards.
  const end = list.length - offset;
  return list.slice(Math.max(0, end - limit), end).reverse();
}

/** A write around the service (a seed, a migration, an operator's fix) says so after it. */
export async function markListingChanged(connection: Connection): Promise<void> {
  await createListingLog(connection).record({ all: true });
  await settled(performance.now());
}

/**
 * Resolves FRESH_MS after `loggedAt`, when no replica answers a read from a catch-up that began
 * before the entry logged then was there.
 */
async function settled(loggedAt: number): Promise<void> {
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
 * `coldWork`: the bulkhead that lookups of texts not kept run in, taking turns per client, so one
 * client asking for pages no one else reads delays others by one lookup each.
 */
export function createListing(
  posts: PostModel,
  coldWork: Bulkhead,
  log: ListingLog = createListingLog(posts.db),
): Listing {
  let state: State | undefined;
  const texts = new Map<string, KeptText>();
  let textChars = 0;

  function keepText(record: PostRecord): Post {
    const id = record._id.toHexString();
    const post = toPost(record);
    dropText(id);
    const chars = post.title.length + post.body.length;
    texts.set(id, { version: record.version ?? 0, post, chars });
    textChars += chars;
    for (const oldest of texts.keys()) {
      if (textChars <= TEXT_BUDGET_CHARS) break;
      dropText(oldest);
    }
    return post;
  }

  function dropText(id: string): void {
    const kept = texts.get(id);
    if (!kept) return;
    texts.delete(id);
    textChars -= kept.chars;
  }

  /** A post's state, read just now, applied to the index and to the kept texts. */
  function applyRead(index: ListingIndex, id: string, record: PostRecord | null): boolean {
    const changed = index.apply(id, record as PlacedRecord | null);
    if (changed) {
      if (record?.status === 'published') keepText(record);
      else dropText(id);
    }
    return changed;
  }

  const readPost = (id: string) => posts.findById(id, FIELDS).lean<PostRecord>();

  /**
   * `fresh`: the texts kept may not be current, though their versions say so (anything may have
   * changed around the service): they go too.
   */
  async function readWhole({ fresh }: { fresh: boolean }): Promise<State> {
    const readAt = Date.now();
    const checkedAt = performance.now();
    const seq = await log.head();
    const records = await posts.find({ status: 'published' }, PLACED_FIELDS).lean<PlacedRecord[]>();
    if (fresh) {
      texts.clear();
      textChars = 0;
    }
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
      if ('authorId' in change) current.index.removeAuthor(change.authorId);
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

  function caughtUp(): Promise<State> {
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
  }

  /**
   * The texts of `slice`, from those kept or read now; undefined when a read shows the index
   * behind (a post changed since the catch-up): it has been applied, and the page is cut again.
   */
  async function textsOf(index: ListingIndex, slice: readonly Placed[], client: string): Promise<Post[] | undefined> {
    const found = new Map<string, Post>();
    const missing: Placed[] = [];
    for (const placed of slice) {
      const kept = texts.get(placed.id);
      if (kept && kept.version === placed.version) {
        // Most recently used last (Map keeps insertion order): the most read pages keep their texts.
        texts.delete(placed.id);
        texts.set(placed.id, kept);
        found.set(placed.id, kept.post);
      } else missing.push(placed);
    }
    if (missing.length > 0) {
      const records = await coldWork.run(client, () => Promise.all(missing.map((p) => readPost(p.id))));
      let behind = false;
      for (const [i, placed] of missing.entries()) {
        const record = records[i] ?? null;
        if (record?.status === 'published' && (record.version ?? 0) === placed.version) {
          found.set(placed.id, keepText(record));
        } else {
          applyRead(index, placed.id, record);
          behind = true;
        }
      }
      if (behind) return undefined;
    }
    return slice.map((placed) => found.get(placed.id) as Post);
  }

  /** This replica's own write, as it left the post: no need to read it again to catch up. */
  function applyOwn(seq: number, change: Change, written: PostRecord | null | undefined): void {
    const current = state;
    if (!current) return;
    // Anything may have changed: the next read reads it all (the entry may also hold other
    // writers' changes, which they mark applied).
    if ('all' in change) {
      if (state === current) state = undefined;
      return;
    }
    if ('authorId' in change) current.index.removeAuthor(change.authorId);
    if ('postId' in change && written !== undefined) applyRead(current.index, change.postId, written);
    else if (!('authorId' in change)) return;
    current.applied.add(seq);
    advance(current, current.seq);
  }

  return {
    async page({ offset, limit, tag, authorId, sort = 'newest' }, client) {
      const { index } = await caughtUp();
      for (let cut = 1; ; cut++) {
        const list = index.list({ tag, authorId }, sort === 'title' ? 'title' : 'newest');
        const total = list.length;
        const posts = offset >= total ? [] : await textsOf(index, sliceOf(list, offset, limit, sort), client);
        if (posts) return { posts, total };
        if (cut === CUTS) throw new Error(`the list kept changing while page ${offset}/${limit} was cut`);
      }
    },

    async published(id, client) {
      const { index } = await caughtUp();
      for (let cut = 1; ; cut++) {
        const placed = index.placed(id);
        if (!placed) return undefined;
        const posts = await textsOf(index, [placed], client);
        if (posts) return posts[0];
        if (cut === CUTS) throw new Error(`post ${id} kept changing while it was read`);
      }
    },

    async changed(change, written) {
      const seq = await log.record(change);
      const loggedAt = performance.now();
      applyOwn(seq, change, written);
      await settled(loggedAt);
    },
  };
}
