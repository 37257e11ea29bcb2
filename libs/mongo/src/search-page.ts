/**
 * A search of one owner's records, read now (`@cs/search`'s scan ranking): for sets that are
 * private and bounded, where an index on every replica would cost more than reading the set.
 *
 * The records are read newest first, SEARCH_SCAN_MAX at most, in batches (a batch's texts are the
 * memory it takes, whatever the set's size), and only the matching ids and their counts are kept.
 * The page's records are then read again by id, so a page costs the scan and one read.
 *
 * Ranked results have no key to page on: a cursor is the offset of the next page. A record added,
 * changed or removed between two pages may move others across the boundary, as in any search.
 * The cursor is opaque to clients: `s<offset>` in base64url.
 */
import { createScanRanking, type FieldBoosts, type SearchQuery } from '@cs/search';
import { type Model, type QueryFilter, Types } from 'mongoose';
import { NEWEST_FIRST, type Page } from './pages';
import { trusted } from './trusted';

/** The newest records of an owner that a search reads; older ones are not found. */
export const SEARCH_SCAN_MAX = 10_000;
/** Records read at once: at most this many records' texts are in memory. */
const BATCH = 100;

export interface SearchPageQuery {
  limit: number;
  /** The offset the page starts at (a cursor `decodeSearchCursor` read); the first page when undefined. */
  after: number | undefined;
}

/** The search's cursor, or undefined when `raw` is not one we made. */
export function decodeSearchCursor(raw: string): number | undefined {
  if (!/^[A-Za-z0-9_-]{1,16}$/.test(raw)) return undefined;
  const match = /^s(\d{1,5})$/.exec(Buffer.from(raw, 'base64url').toString());
  return match ? Number(match[1]) : undefined;
}

function encodeSearchCursor(offset: number): string {
  return Buffer.from(`s${offset}`).toString('base64url');
}

/**
 * The page of `model`'s documents matching `filter` and `query`, best first and newest first among
 * equals. `texts` gives a record's searchable fields, by the names `boosts` weighs.
 */
export async function searchPage<S, R extends { _id: Types.ObjectId }, T>(
  model: Model<S>,
  filter: QueryFilter<S>,
  {
    fields,
    query,
    boosts,
    texts,
  }: {
    fields: string;
    query: SearchQuery;
    boosts: FieldBoosts;
    texts: (record: R) => Record<string, string>;
  },
  { limit, after = 0 }: SearchPageQuery,
  map: (record: R) => T,
): Promise<Page<T>> {
  const ranking = createScanRanking(query, boosts);
  const scan = model.find(filter, fields).sort(NEWEST_FIRST).limit(SEARCH_SCAN_MAX).lean<R[]>().cursor({
    batchSize: BATCH,
  });
  for await (const record of scan) ranking.offer((record as R)._id.toHexString(), texts(record as R));

  const ranked = ranking.ranked();
  const ids = ranked.slice(after, after + limit).map(({ id }) => id);
  if (ids.length === 0) return { items: [] };
  const records = await model
    .find({ ...filter, _id: trusted({ $in: ids.map((id) => new Types.ObjectId(id)) }) } as QueryFilter<S>, fields)
    .lean<R[]>();
  const byId = new Map(records.map((record) => [record._id.toHexString(), record]));
  // A record deleted since the scan is left out of its page.
  const items = ids.flatMap((id) => {
    const record = byId.get(id);
    return record ? [map(record)] : [];
  });
  const next = after + limit < ranked.length ? encodeSearchCursor(after + limit) : undefined;
  return { items, ...(next ? { next } : {}) };
}
