/** A MongoDB URL's three parts: its scheme and hosts, its database (maybe empty), its query. */
function partsOf(url: string): { hosts: string; database: string; query: string } {
  const scheme = url.indexOf('://');
  const queryAt = url.indexOf('?', scheme + 3);
  const query = queryAt === -1 ? '' : url.slice(queryAt);
  const beforeQuery = queryAt === -1 ? url : url.slice(0, queryAt);
  const slash = beforeQuery.indexOf('/', scheme + 3);
  return {
    hosts: slash === -1 ? beforeQuery : beforeQuery.slice(0, slash),
    database: slash === -1 ? '' : beforeQuery.slice(slash + 1),
    query,
  };
}

/** `mongodb://host:port/?x` + `posts` → `mongodb://host:port/posts?x`, for any host list. */
export function withDatabase(url: string, database: string): string {
  const { hosts, query } = partsOf(url);
  return `${hosts}/${database}${query}`;
}

/** `mongodb://host:port/posts?x` → `posts`; empty when the URL names no database. */
export function databaseIn(url: string): string {
  return partsOf(url).database;
}
