/**
 * The published posts in list order (newest first, `_id` breaking ties), held in memory: what
 * every page of the public list, and its count, is cut from. No text but the title (for the
 * title order), only what places a post: about 200 bytes a post, and its title.
 *
 * Kept in two orders, patched together: newest first, and by title (case-folded, then newest
 * first, then `_id`); oldest first is newest first read from the end, so its pages are the same
 * posts in reverse. An author's posts are kept apart too, newest first, so an author's page is
 * cut from that author's posts alone.
 *
 * It is patched one post at a time with that post's state as just read from the database
 * (`apply`). A post's place by date never moves, since createdAt never changes; its place by title
 * moves with its title, and whether it is listed, and under which tags. Reads of one post may come
 * back out of order (two requests, two connections), so each post's version decides: a state
 * older than or equal to the one already applied is ignored, for posts no longer listed too
 * (drafts and deleted posts are remembered by version while this index lives).
 */
import type { Types } from 'mongoose';

/** What the index reads of a post. */
export interface PlacedRecord {
  _id: Types.ObjectId;
  createdAt: Date;
  title: string;
  tags: string[];
  authorId: Types.ObjectId;
  status: string;
  version?: number;
}

export interface Placed {
  id: string;
  createdAt: number;
  /** The title case-folded: what the title order compares. */
  titleKey: string;
  tags: string[];
  authorId: string;
  version: number;
}

/** The orders the index keeps; oldest first is newest first read from the end. */
export type IndexOrder = 'newest' | 'title';

/** Which listed posts: of one tag, of one author, or both; all when neither. */
export interface ListFilter {
  tag?: string | undefined;
  authorId?: string | undefined;
}

/** The fields a PlacedRecord needs, for a query's projection. */
export const PLACED_FIELDS = '_id createdAt title tags authorId status version';
/** Filtered lists kept at once, least recently used dropped first: each is cut from the whole. */
const LISTS_KEPT = 256;
const DELETED = Number.POSITIVE_INFINITY;

/**
 * A title as the title order compares it. Lowercased, locale-free, then compared by code unit:
 * every replica, whatever its ICU, orders alike, so a page's boundary is the same on each.
 */
export function foldTitle(title: string): string {
  return title.toLowerCase();
}

function placed(record: PlacedRecord): Placed {
  return {
    id: record._id.toHexString(),
    createdAt: record.createdAt.getTime(),
    titleKey: foldTitle(record.title),
    tags: record.tags,
    authorId: record.authorId.toHexString(),
    version: record.version ?? 0,
  };
}

/** Negative when `a` is listed before `b`, newest first. */
export function newest(a: Placed, b: Placed): number {
  if (a.createdAt !== b.createdAt) return b.createdAt - a.createdAt;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

/** Negative when `a` is listed before `b` by title: case-folded A to Z, then newest first. */
function byTitle(a: Placed, b: Placed): number {
  if (a.titleKey !== b.titleKey) return a.titleKey < b.titleKey ? -1 : 1;
  return newest(a, b);
}

const ORDERS: Record<IndexOrder, (a: Placed, b: Placed) => number> = { newest, title: byTitle };

interface KeptList extends ListFilter {
  list: Placed[];
}

export class ListingIndex {
  private readonly listed: Placed[];
  private readonly titled: Placed[];
  /** Each author's listed posts, newest first. */
  private readonly byAuthor = new Map<string, Placed[]>();
  private readonly byId = new Map<string, Placed>();
  /** Versions of posts read while not listed (Infinity: deleted). */
  private readonly unlisted = new Map<string, number>();
  /** Filtered lists, by order and filter, most recently used last. */
  private readonly kept = new Map<string, KeptList>();

  /** `records`: every published post, as one read of the database returned them. */
  constructor(records: PlacedRecord[]) {
    this.listed = records.map(placed).sort(newest);
    this.titled = [...this.listed].sort(byTitle);
    for (const post of this.listed) {
      this.byId.set(post.id, post);
      const theirs = this.byAuthor.get(post.authorId);
      if (theirs) theirs.push(post);
      else this.byAuthor.set(post.authorId, [post]);
    }
  }

  /** The listed posts in `order`, of the filter's tag and author when given. */
  list({ tag, authorId }: ListFilter = {}, order: IndexOrder = 'newest'): readonly Placed[] {
    if (authorId === undefined && tag === undefined) return order === 'title' ? this.titled : this.listed;
    const theirs = authorId === undefined ? undefined : (this.byAuthor.get(authorId) ?? []);
    if (theirs && tag === undefined && order === 'newest') return theirs;
    // Tags and author ids hold neither a space nor '*' (their patterns): no two filters share a key.
    const key = `${order} ${tag ?? '*'} ${authorId ?? '*'}`;
    let kept = this.kept.get(key);
    if (kept) {
      this.kept.delete(key);
    } else {
      const from = theirs ?? (order === 'title' ? this.titled : this.listed);
      const list = tag === undefined ? [...from] : from.filter((post) => post.tags.includes(tag));
      // An author's posts are kept newest first: another order is sorted from them, a few.
      if (theirs && order !== 'newest') list.sort(ORDERS[order]);
      kept = { tag, authorId, list };
      if (this.kept.size >= LISTS_KEPT) this.kept.delete(this.kept.keys().next().value as string);
    }
    this.kept.set(key, kept);
    return kept.list;
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

  /** The author's account is gone, and with it every post of theirs: returns the ids unlisted. */
  removeAuthor(authorId: string): string[] {
    const theirs = [...(this.byAuthor.get(authorId) ?? [])];
    for (const post of theirs) {
      this.unlist(post.id);
      this.unlisted.set(post.id, DELETED);
    }
    return theirs.map((post) => post.id);
  }

  private place(post: Placed): void {
    insertInto(this.listed, post, newest);
    insertInto(this.titled, post, byTitle);
    const theirs = this.byAuthor.get(post.authorId);
    if (theirs) insertInto(theirs, post, newest);
    else this.byAuthor.set(post.authorId, [post]);
    this.byId.set(post.id, post);
    this.forget(post);
  }

  private unlist(id: string): void {
    const post = this.byId.get(id);
    if (!post) return;
    removeFrom(this.listed, post, newest);
    removeFrom(this.titled, post, byTitle);
    const theirs = this.byAuthor.get(post.authorId);
    if (theirs) {
      removeFrom(theirs, post, newest);
      if (theirs.length === 0) this.byAuthor.delete(post.authorId);
    }
    this.byId.delete(id);
    this.forget(post);
  }

  /** The kept lists that `post` is, or was, in: cut again when next asked for. */
  private forget(post: Placed): void {
    for (const [key, kept] of this.kept) {
      const ofTag = kept.tag === undefined || post.tags.includes(kept.tag);
      const ofAuthor = kept.authorId === undefined || kept.authorId === post.authorId;
      if (ofTag && ofAuthor) this.kept.delete(key);
    }
  }
}

/** Where `post` is, or would go, in `list` sorted by `order`: the first post not before it. */
function positionOf(list: readonly Placed[], post: Placed, order: (a: Placed, b: Placed) => number): number {
  let low = 0;
  let high = list.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (order(list[middle] as Placed, post) < 0) low = middle + 1;
    else high = middle;
  }
  return low;
}

function insertInto(list: Placed[], post: Placed, order: (a: Placed, b: Placed) => number): void {
  list.splice(positionOf(list, post, order), 0, post);
}

/** `post` itself (the order is total: `_id` breaks every tie), found where its keys place it. */
function removeFrom(list: Placed[], post: Placed, order: (a: Placed, b: Placed) => number): void {
  const at = positionOf(list, post, order);
  if (list[at] === post) list.splice(at, 1);
}
