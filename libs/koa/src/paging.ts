/**
 * Paged lists over HTTP: `?limit=&cursor=` in, a JSON array out, and the next page, when there is
 * one, in a `Link: <…>; rel="next"` header (RFC 8288), so the body keeps the shape a list had.
 */
import { HttpError } from '@cs/errors';
import type { AppContext } from './context';

export const PAGING_MESSAGES = { badCursor: 'Invalid cursor' } as const;

export interface PageQuery<C> {
  limit: number;
  /** Where the page starts: after this cursor, or at the newest when there is none. */
  after: C | undefined;
}

/**
 * The page asked for. A missing or unreadable `limit` is the default, and a larger one the
 * maximum, as the posts list does; a `cursor` that is there must decode, or 400: a client that
 * silently got the first page again would loop for ever.
 */
export function readPageQuery<C>(
  query: Record<string, unknown>,
  { defaultLimit, maxLimit, decode }: { defaultLimit: number; maxLimit: number; decode(raw: string): C | undefined },
): PageQuery<C> {
  const asked = typeof query.limit === 'string' && /^\d+$/.test(query.limit) ? Number(query.limit) : 0;
  const limit = asked >= 1 ? Math.min(asked, maxLimit) : defaultLimit;
  if (query.cursor === undefined) return { limit, after: undefined };
  const after = typeof query.cursor === 'string' ? decode(query.cursor) : undefined;
  if (after === undefined) throw new HttpError(400, PAGING_MESSAGES.badCursor);
  return { limit, after };
}

/**
 * Sets the Link header to the page after this one, when there is one. `keep`: the query's other
 * parameters that the next page needs too (a search's `q`).
 */
export function linkNext(
  ctx: AppContext,
  limit: number,
  next: string | undefined,
  keep: Record<string, string> = {},
): void {
  if (next === undefined) return;
  const query = new URLSearchParams({ ...keep, limit: String(limit), cursor: next });
  ctx.set('Link', `<${ctx.path}?${query}>; rel="next"`);
}
