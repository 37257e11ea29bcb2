/**
 * The published posts in list order (newest first, `_id` breaking ties), held in memory: what
 * every page of the public list, and its count, is cut from. No text, only what places a post:
 * about 200 bytes a post.
 *
 * It is patched one post at a time with that post's state as just read from the database
 * (`apply`). A post's place never moves, since createdAt never changes; only whether it is
 * listed, and under which tags. Reads of one post may come back out of order (two requests, two
 * connections), so each post's version decides: a state older than or equal to the one already
 * applied is ignored, for posts no longer listed too (drafts and deleted posts are remembered by
 * version while this index lives).
 */
import type { Types } from 'mongoose';

/** What the index reads of a post. */
export interface PlacedRecord {
  _id: Types.ObjectId;
  createdAt: Date;
  tags: string[];
  authorId: Types.ObjectId;
  status: string;
  version?: number;
}

export interface Placed {
  id: string;
  createdAt: number;
  tags: string[];
  authorId: string;
  version: number;
}

/** The fields a PlacedRecord needs, for a query's projection. */
export const PLACED_FIELDS = '_id createdAt tags authorId status version';
/** Lists of a tag kept at once, least recently used dropped first: each is cut from the whole. */
const TAGS_KEPT = 256;
const DELETED = Number.POSITIVE_INFINITY;

function placed(record: PlacedRecord): Placed {
  return {
    id: record._id.toHexString(),
    createdAt: record.createdAt.getTime(),
    tags: record.tags,
    authorId: record.authorId.toHexString(),
    version: record.version ?? 0,
  };
}

/** Negative when `a` is listed before `b`. */
function order(a: Placed, b: Placed): number {
  if (a.createdAt !== b.createdAt) return b.createdAt - a.createdAt;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

export class ListingIndex {
  private readonly listed: Placed[];
  private readonly byId = new Map<string, Placed>();
  /** Versions of posts read while not listed (Infinity: deleted). */
  private readonly unlisted = new Map<string, number>();
  private readonly byTag = new Map<string, Placed[]>();

  /** `records`: every published post, as one read of the database returned them. */
  constructor(records: PlacedRecord[]) {
    this.listed = records.map(placed).sort(order);
    for (const post of this.listed) this.byId.set(post.id, post);
  }

  /** The listed posts, of one tag when given. */
  list(tag?: string): readonly Placed[] {
    if (tag === undefined) return this.listed;
    let list = this.byTag.get(tag);
    if (list) {
      this.byTag.delete(tag);
    } else {
      list = this.listed.filter((post) => post.tags.includes(tag));
      if (this.byTag.size >= TAGS_KEPT) this.byTag.delete(this.byTag.keys().next().value as string);
    }
    this.byTag.set(tag, list);
    return list;
  }

  /** The post as listed (published); undefined when it is not. */
  placed(id: string): Placed | undefined {
    return this.byId.get(id);
  }

  /** The version applied for this post, listed or not; undefined when it was never read. */
  versionOf(id: string): number | undefined {
    return this.byId.get(id)?.version ?? this.unlisted.get(id);
  }

  /**
   * The post's state as read (null: there is no such post). Returns whether it changed anything:
   * false for a state no newer than the one applied.
   */
  apply(id: string, record: PlacedRecord | null): boolean {
    const version = record ? (record.version ?? 0) : DELETED;
    const known = this.versionOf(id);
    if (known !== undefined && version <= known) return false;
    this.unlist(id);
    if (record?.status === 'published') this.place(placed(record));
    else this.unlisted.set(id, version);
    return true;
  }

  /** The author's account is gone, and with it every post of theirs. */
  removeAuthor(authorId: string): void {
    for (const post of this.listed.filter((p) => p.authorId === authorId)) {
      this.unlist(post.id);
      this.unlisted.set(post.id, DELETED);
    }
  }

  private place(post: Placed): void {
    this.listed.splice(this.positionOf(post), 0, post);
    this.byId.set(post.id, post);
    this.forget(post.tags);
  }

  private unlist(id: string): void {
    const post = this.byId.get(id);
    if (!post) return;
    this.listed.splice(this.positionOf(post), 1);
    this.byId.delete(id);
    this.forget(post.tags);
  }

  /** Where `post` is, or would go: the first listed post not before it. */
  private positionOf(post: Placed): number {
    let low = 0;
    let high = this.listed.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (order(this.listed[middle] as Placed, post) < 0) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  private forget(tags: string[]): void {
    for (const tag of tags) this.byTag.delete(tag);
  }
}
