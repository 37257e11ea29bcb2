/**
 * Keyset pages, newest first by (createdAt, _id). A cursor names the last document of a page;
 * the next page is what sorts after it. Unlike skip/limit, a page never repeats or skips a
 * document when others are added meanwhile, and the hundredth page costs what the first does.
 * The cursor is opaque to clients: `<ms>.<id>` in base64url.
 */
import { type Model, type QueryFilter, Types } from 'mongoose';
import { trusted } from './trusted';

export interface Cursor {
  createdAt: Date;
  id: Types.ObjectId;
}

export const NEWEST_FIRST = { createdAt: -1, _id: -1 } as const;

export function encodeCursor({ createdAt, _id }: { createdAt: Date; _id: Types.ObjectId }): string {
  return Buffer.from(`${createdAt.getTime()}.${_id.toHexString()}`).toString('base64url');
}

/** The cursor, or undefined when `raw` is not one we made. */
export function decodeCursor(raw: string): Cursor | undefined {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(raw)) return undefined;
  const match = /^(\d{1,15})\.([0-9a-f]{24})$/.exec(Buffer.from(raw, 'base64url').toString());
  if (!match) return undefined;
  return { createdAt: new Date(Number(match[1])), id: new Types.ObjectId(match[2]) };
}

/** A page of a list, and the cursor of the next one when there is one. */
export interface Page<T> {
  items: T[];
  next?: string;
}

interface Paged {
  createdAt: Date;
  _id: Types.ObjectId;
}

/**
 * One page of `model`'s documents that match `filter`, newest first, starting after `start`:
 * it reads one more than the page, to know whether there is a next one.
 */
export async function findPage<S, R extends Paged, T>(
  model: Model<S>,
  filter: QueryFilter<S>,
  fields: string,
  { limit, after: start }: { limit: number; after: Cursor | undefined },
  map: (record: R) => T,
): Promise<Page<T>> {
  const records = await model
    .find({ ...filter, ...after(start) } as QueryFilter<S>, fields)
    .sort(NEWEST_FIRST)
    .limit(limit + 1)
    .lean<R[]>();
  const page = pageOf(records, limit);
  return { items: page.items.map(map), ...(page.next ? { next: page.next } : {}) };
}

/** The filter of what sorts after `cursor` in NEWEST_FIRST; nothing without one. */
export function after(cursor: Cursor | undefined): Record<string, unknown> {
  if (!cursor) return {};
  return {
    $or: [
      { createdAt: trusted({ $lt: cursor.createdAt }) },
      { createdAt: cursor.createdAt, _id: trusted({ $lt: cursor.id }) },
    ],
  };
}

/** One page of `limit` from `limit + 1` documents read: the page, and the cursor after it if more. */
export function pageOf<D extends { createdAt: Date; _id: Types.ObjectId }>(
  records: D[],
  limit: number,
): { items: D[]; next: string | undefined } {
  const items = records.slice(0, limit);
  const last = items.at(-1);
  return { items, next: records.length > limit && last ? encodeCursor(last) : undefined };
}
