/** The bulk publisher (attacks 9 and 10): its import as paced streams, and the rate it reached. */
import type { PacedResult, PacedStream } from '../paced-spec';
import { round } from '../stats';
import { BULK, BULK_POSTS } from './settings';
import { okCount } from './statuses';

/** Posts a publisher's stream created and published, in how long. */
export interface PublishRate {
  posts: number;
  seconds: number;
  postsPerS: number;
}

export function publishRate(r: PacedResult | undefined): PublishRate {
  const posts = okCount(r);
  const seconds = r?.seconds ?? 0;
  return { posts, seconds, postsPerS: seconds ? round(posts / seconds, 1) : 0 };
}

export const sayRate = (r: PublishRate) =>
  `${r.posts} posts created and published in ${r.seconds} s: ${r.postsPerS} posts/s`;

/** One account's import: create and publish, 16 in flight, each address just under RATE_LIMIT. */
export function bulkImport(headers: Record<string, string>, from: string[], total?: number): PacedStream {
  return {
    name: 'attacker',
    request: { kind: 'create and publish', headers, tag: 'import' },
    ratePerS: BULK.postsPerSPerAddress * from.length,
    concurrency: BULK.concurrency,
    addresses: from,
    total,
  };
}

/** How long the whole import may take: three times what its pace allows, and never less than an attack. */
export const bulkImportS = (attackS: number) =>
  Math.max(attackS, Math.ceil((BULK_POSTS / (BULK.postsPerSPerAddress * BULK.addresses.length)) * 3));
