/**
 * The one process's database clients: one for each server the services' databases are on, not one
 * for each service. Each service still has a database of its own on it (`databaseOn`), but the
 * process holds one pool, one monitor checking the server twice a second and one set of sockets
 * for them all, where each service's own client held its own set, idle as under load.
 */
import type { Logger } from '@cs/log';
import { type Connection, databaseIn, databaseOn, withDatabase } from '@cs/mongo';
import { connectDatabase } from '@cs/service';

export interface Databases {
  /** `databases[i]`: the database of the i-th service given, undefined for one that names none. */
  databases: (Connection | undefined)[];
  /** Closes every client, once the services that use them are closed. */
  close(): Promise<void>;
}

/**
 * Connects to each server the services' MONGO_URLs name (an URL without its database: the hosts
 * and the query), with a pool as large, and as many warm connections, as their own clients had
 * together. A service whose URL names no database gets none here, and connects alone.
 */
export async function connectServers(
  services: readonly { readonly MONGO_URL?: string }[],
  logger: Logger,
): Promise<Databases> {
  const serverOf = (url: string) => withDatabase(url, '');
  const urls = services.map(({ MONGO_URL }) => (MONGO_URL && databaseIn(MONGO_URL) ? MONGO_URL : undefined));
  const databasesOn = new Map<string, number>();
  for (const url of urls) if (url) databasesOn.set(serverOf(url), (databasesOn.get(serverOf(url)) ?? 0) + 1);
  const servers = new Map(
    await Promise.all(
      [...databasesOn].map(async ([server, count]) => [server, await connectDatabase(server, logger, count)] as const),
    ),
  );
  return {
    databases: urls.map((url) => {
      const server = url && servers.get(serverOf(url));
      return url && server ? databaseOn(server, databaseIn(url)) : undefined;
    }),
    close: async () => {
      await Promise.all([...servers.values()].map((server) => server.close()));
    },
  };
}
