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
 * A published post read by its id is served the same way (`published`): caught up, then from the
 * kept texts, so an unpublish or a delete acknowledged anywhere is never answered from memory.
 *
 * How fresh each read is, and when the listing is read whole again: listing-catch-up.ts. The
 * texts of the posts on its pages are kept apart, by version (listing-texts.ts).
 */
import type { Bulkhead } from '@cs/koa';
import type { SearchQuery } from '@cs/search';
import type { Connection } from 'mongoose';
import { createCatchUp, settled } from './listing-catch-up';
import { type ListFilter, type ListingIndex, newest, type Placed, type PlacedRecord } from './listing-index';
import { type Change, createListingLog, type ListingLog } from './listing-log';
import { createListingSearch } from './listing-search';
import { createKeptTexts } from './listing-texts';
import { POST_FIELDS, type Post, type PostModel, type PostRecord } from './model';
import type { PostSort } from './terms';

/** A page whose posts change while it is cut is cut again, this many times at most. */
const CUTS = 5;

/** Which page: `offset` and `limit` into the listed posts of the filter, in `sort` (default newest). */
export interface PageQuery extends ListFilter {
  offset: number;
  limit: number;
  /** Newest first (the contract's), oldest first, or by title. */
  sort?: PostSort;
}

/** A search of the listed posts: `offset` and `limit` into those that match, best first. */
export interface SearchPageQuery extends ListFilter {
  query: SearchQuery;
  offset: number;
  limit: number;
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
   * The listed posts that match the search, of `tag` and `authorId` when given, best first and
   * newest first among equals: those at `offset` (up to `limit`), and how many match in all.
   */
  search(query: SearchPageQuery, client: string): Promise<ListedPage>;
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
 * `coldWork`: the bulkhead that lookups of texts not kept run in, taking turns per client, so one
 * client asking for pages no one else reads delays others by one lookup each.
 */
export function createListing(
  posts: PostModel,
  coldWork: Bulkhead,
  log: ListingLog = createListingLog(posts.db),
): Listing {
  const texts = createKeptTexts();
  const words = createListingSearch(posts);

  /** A post's state, read just now, applied to the index, to the kept texts and to the words. */
  function applyRead(index: ListingIndex, id: string, record: PostRecord | null): boolean {
    const changed = index.apply(id, record as PlacedRecord | null);
    if (changed) {
      if (record?.status === 'published') texts.keep(record);
      else texts.drop(id);
      words.apply(id, record);
    }
    return changed;
  }

  const readPost = (id: string) => posts.findById(id, FIELDS).lean<PostRecord>();
  const freshness = createCatchUp({
    posts,
    log,
    readPost,
    applyRead,
    removeAuthor: (index, authorId) => words.drop(index.removeAuthor(authorId)),
    forgetTexts: () => texts.clear(),
    follow: (records, before, fresh) => words.follow(records, before, fresh),
  });

  /** The page at `offset` (up to `limit`) of `list`, with its posts' texts, cut again if they changed meanwhile. */
  async function pageOf(
    index: ListingIndex,
    list: () => readonly Placed[],
    offset: number,
    limit: number,
    sort: PostSort,
    client: string,
  ): Promise<ListedPage> {
    for (let cut = 1; ; cut++) {
      const listed = list();
      const total = listed.length;
      const posts = offset >= total ? [] : await textsOf(index, sliceOf(listed, offset, limit, sort), client);
      if (posts) return { posts, total };
      if (cut === CUTS) throw new Error(`the list kept changing while page ${offset}/${limit} was cut`);
    }
  }

  /**
   * The texts of `slice`, from those kept or read now; undefined when a read shows the index
   * behind (a post changed since the catch-up): it has been applied, and the page is cut again.
   */
  async function textsOf(index: ListingIndex, slice: readonly Placed[], client: string): Promise<Post[] | undefined> {
    const found = new Map<string, Post>();
    const missing: Placed[] = [];
    for (const placed of slice) {
      const kept = texts.at(placed.id, placed.version);
      if (kept) found.set(placed.id, kept);
      else missing.push(placed);
    }
    if (missing.length > 0) {
      const records = await coldWork.run(client, () => Promise.all(missing.map((p) => readPost(p.id))));
      let behind = false;
      for (const [i, placed] of missing.entries()) {
        const record = records[i] ?? null;
        if (record?.status === 'published' && (record.version ?? 0) === placed.version) {
          found.set(placed.id, texts.keep(record));
        } else {
          applyRead(index, placed.id, record);
          behind = true;
        }
      }
      if (behind) return undefined;
    }
    return slice.map((placed) => found.get(placed.id) as Post);
  }

  return {
    async page({ offset, limit, tag, authorId, sort = 'newest' }, client) {
      const { index } = await freshness.caughtUp();
      const order = sort === 'title' ? 'title' : 'newest';
      return pageOf(index, () => index.list({ tag, authorId }, order), offset, limit, sort, client);
    },

    async search({ query, offset, limit, tag, authorId }, client) {
      const { index } = await freshness.caughtUp();
      const ranked = await words.find(query);
      // What the listing lists, and only that: the words may hold a post a moment longer.
      const matching = () => {
        const found: { placed: Placed; score: number }[] = [];
        for (const { id, score } of ranked) {
          const placed = index.placed(id);
          if (!placed) continue;
          if (tag !== undefined && !placed.tags.includes(tag)) continue;
          if (authorId !== undefined && placed.authorId !== authorId) continue;
          found.push({ placed, score });
        }
        found.sort((a, b) => b.score - a.score || newest(a.placed, b.placed));
        return found.map(({ placed }) => placed);
      };
      return pageOf(index, matching, offset, limit, 'newest', client);
    },

    async published(id, client) {
      const { index } = await freshness.caughtUp();
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
      freshness.applyOwn(seq, change, written);
      await settled(loggedAt);
    },
  };
}
