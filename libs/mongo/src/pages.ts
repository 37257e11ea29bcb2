/**
 * Keyset pages, newest first by (createdAt, _id). A cursor names the last document of a page;
 * the next page is what sorts after it. Unlike skip/limit, a page never repeats or skips a
 * document when others are added meanwhile, and the hundredth page costs what the first does.
 * The cursor is opaque to clients: `<ms>.<id>` in base64url.
 */
import { Types } from 'mongoose';
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
