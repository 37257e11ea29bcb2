/**
 * The public list's pages, kept in this process and used only while the listing has not changed.
 *
 * Why. Neither FerretDB backend sends sort, skip or limit down to its database, and a count
 * decodes every matching document: on FerretDB a page of the public list costs time in
 * proportion to the posts stored (80 ms of FerretDB's CPU at 10,000 posts, on PostgreSQL). The
 * list is the most read page of the service and changes only when a published post does.
 *
 * How it stays exact across replicas. One document, `listing_versions/published`, holds a token
 * that every change to a published post replaces with a fresh ObjectId once the change is
 * written, before the change is acknowledged. A page is computed after reading the token and kept
 * with it; a request uses the kept page only if the token it reads (one lookup by _id) is still
 * the same. A change the page may have missed was written after that token was read, so its own
 * token replaced that one before anyone was told of the change. No token is ever written twice,
 * so a replacement can never look like the old token, even on FerretDB, whose updates are not
 * atomic: each writer writes a token of its own. A change whose token could not be written
 * (the database failed between the two writes) is seen by other replicas within MAX_AGE_MS.
 * A write that does not go through the service (a seed, a migration, an operator's fix) calls
 * `markListingChanged` after it, or is seen within MAX_AGE_MS.
 *
 * Concurrent requests for a page that is not kept share one computation. Pages are dropped
 * least recently used first, beyond a budget of characters of titles and bodies. A request that
 * needs several pieces (a count and a block of posts) reads the token once, through `view()`.
 */

import { isDuplicateKey } from '@cs/mongo';
import { type Connection, type Model, Schema, Types } from 'mongoose';

/** A kept page is computed again after this long, whatever the token says. */
export const MAX_AGE_MS = 30_000;
/** About the memory the kept pages may take, counted in characters of their posts' text. */
const BUDGET_CHARS = 4_000_000;
const LISTING = 'published';

interface Read {
  token: string;
  from: number;
  to: number;
}

interface ListingVersion {
  _id: string;
  token: Types.ObjectId;
}

interface Kept<T> {
  token: string;
  /** When the read of `token` began: what it reflects is no older than this. */
  readFrom: number;
  at: number;
  value: Promise<T>;
  chars: number;
}

/** The kept pages under one read of the listing's token: several lookups for one read. */
export interface PageView<T> {
  /** The page under `key`: the kept one if the listing has not changed since, else `compute()`. */
  get(key: string, compute: () => Promise<T>): Promise<T>;
}

export interface PageCache<T> extends PageView<T> {
  /** Reads the token once, for the lookups of one request. */
  view(): Promise<PageView<T>>;
  /** Call after a change to a published post is written, before it is acknowledged. */
  changed(): Promise<void>;
}

function versionModel(connection: Connection): Model<ListingVersion> {
  return (
    (connection.models.ListingVersion as Model<ListingVersion> | undefined) ??
    connection.model<ListingVersion>(
      'ListingVersion',
      new Schema<ListingVersion>({ _id: String, token: Schema.Types.ObjectId }, { versionKey: false }),
      'listing_versions',
    )
  );
}

/** The listing changed: every replica computes its pages again. */
export async function markListingChanged(connection: Connection): Promise<void> {
  const versions = versionModel(connection);
  const token = { $set: { token: new Types.ObjectId() } };
  try {
    await versions.updateOne({ _id: LISTING }, token, { upsert: true });
  } catch (err) {
    // Two first writers both upsert, one inserts, the other hits the unique _id: write again.
    if (!isDuplicateKey(err)) throw err;
    await versions.updateOne({ _id: LISTING }, token);
  }
}

export function createPageCache<T>(connection: Connection, size: (value: T) => number): PageCache<T> {
  const versions = versionModel(connection);
  const kept = new Map<string, Kept<T>>();
  let chars = 0;

  const drop = (key: string) => {
    const entry = kept.get(key);
    if (!entry) return;
    kept.delete(key);
    chars -= entry.chars;
  };

  /** The token, and when its read began and ended. */
  const currentToken = async (): Promise<Read> => {
    const from = Date.now();
    const version = await versions.findById(LISTING).lean<ListingVersion>();
    return { token: version ? version.token.toHexString() : 'none', from, to: Date.now() };
  };

  /**
   * The kept piece serves a request whose token is the same, or one whose token read ended before
   * the piece's began: that piece is at least as fresh as anything the request could have seen. So
   * a request that read an older token just before a change never replaces the newer piece, and
   * readers of old and new tokens do not take turns computing a piece again and again.
   */
  function lookup(read: Read, key: string, compute: () => Promise<T>): Promise<T> | T {
    const entry = kept.get(key);
    const fresh = entry && (entry.token === read.token || entry.readFrom > read.to);
    if (entry && fresh && Date.now() - entry.at < MAX_AGE_MS) {
      // Most recently used last: Map keeps insertion order.
      kept.delete(key);
      kept.set(key, entry);
      return entry.value;
    }
    drop(key);
    const value = compute();
    const piece: Kept<T> = { token: read.token, readFrom: read.from, at: Date.now(), value, chars: 0 };
    kept.set(key, piece);
    return keep(key, piece);
  }

  async function keep(key: string, fresh: Kept<T>): Promise<T> {
    try {
      fresh.chars = size(await fresh.value);
    } catch (err) {
      if (kept.get(key) === fresh) kept.delete(key);
      throw err;
    }
    if (kept.get(key) !== fresh) return fresh.value;
    chars += fresh.chars;
    for (const oldest of kept.keys()) {
      if (chars <= BUDGET_CHARS) break;
      drop(oldest);
    }
    return fresh.value;
  }

  return {
    async get(key, compute) {
      return lookup(await currentToken(), key, compute);
    },

    async view() {
      const read = await currentToken();
      return { get: async (key, compute) => lookup(read, key, compute) };
    },

    async changed() {
      // This process's pages go first, so that even if the token is not written, this replica
      // answers its own writer's next list exactly.
      kept.clear();
      chars = 0;
      await markListingChanged(connection);
    },
  };
}
