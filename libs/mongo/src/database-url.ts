/** `mongodb://host:port/?x` + `posts` → `mongodb://host:port/posts?x`, for any host list. */
export function withDatabase(url: string, database: string): string {
  const scheme = url.indexOf('://');
  const queryAt = url.indexOf('?', scheme + 3);
  const query = queryAt === -1 ? '' : url.slice(queryAt);
  const beforeQuery = queryAt === -1 ? url : url.slice(0, queryAt);
  const slash = beforeQuery.indexOf('/', scheme + 3);
  const hosts = slash === -1 ? beforeQuery : beforeQuery.slice(0, slash);
  return `${hosts}/${database}${query}`;
}
