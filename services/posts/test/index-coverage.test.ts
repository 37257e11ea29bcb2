import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { POST_INDEXES } from '../src/model';
import { type PostsHarness, startPosts } from './helpers';

/**
 * Every query the service runs, as equality fields and a sort. An index serves a query without
 * scanning the collection when its keys begin with the equality fields and continue with the
 * sort, in order and direction. (FerretDB cannot show index use in explain(); this check holds
 * for MongoDB's planner, and the indexes themselves are read back from the real server.)
 */
const QUERIES = {
  'public list': { equality: ['status'], sort: { createdAt: -1, _id: -1 } },
  'public list by tag': { equality: ['status', 'tags'], sort: { createdAt: -1, _id: -1 } },
  'my-posts': { equality: ['authorId'], sort: { createdAt: -1, _id: -1 } },
  "deleted account's purge": { equality: ['authorId'], sort: {} },
} as const;

type Keys = Record<string, number>;

function serves(index: Keys, query: { equality: readonly string[]; sort: Keys }): boolean {
  const keys = Object.entries(index);
  const wanted = [...query.equality.map((f) => [f, undefined] as const), ...Object.entries(query.sort)];
  return wanted.every(
    ([field, direction], i) => keys[i]?.[0] === field && (direction === undefined || keys[i]?.[1] === direction),
  );
}

let h: PostsHarness;

beforeAll(async () => {
  h = await startPosts(__filename);
});
afterAll(async () => {
  await h.stop();
});

describe('indexes of the posts collection', () => {
  it('when the service starts, then every declared index exists on the server', async () => {
    const onServer = (await h.model.collection.listIndexes().toArray()).map((i) => JSON.stringify(i.key));

    for (const keys of POST_INDEXES) expect(onServer).toContain(JSON.stringify(keys));
  });

  it.each(Object.entries(QUERIES))(
    'when the service runs the %s query, then one index serves its filter and sort',
    async (_name, query) => {
      const onServer = (await h.model.collection.listIndexes().toArray()).map((i) => i.key as Keys);

      expect(onServer.some((index) => serves(index, query))).toBe(true);
    },
  );

  it('when an index lacks the sort keys, then the check says it does not serve the query', () => {
    expect(serves({ status: 1 }, QUERIES['public list'])).toBe(false);
    expect(serves({ status: 1, createdAt: 1, _id: 1 }, QUERIES['public list'])).toBe(false);
  });
});
