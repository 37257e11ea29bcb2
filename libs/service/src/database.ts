import type { Logger } from '@cs/log';
import { type Connection, connectMongo, watchReachability } from '@cs/mongo';

/**
 * A connection to the database server at `url`, retried while it starts, whose loss and return are
 * logged. `databases`, how many services' databases it serves: see connectMongo.
 */
export async function connectDatabase(url: string, logger: Logger, databases?: number): Promise<Connection> {
  const connection = await connectMongo(url, {
    databases,
    onRetry: (attempt, err) => logger.warn({ attempt, err: String(err) }, 'database not reachable yet; retrying'),
  });
  watchReachability(connection, {
    lost: (reason) => logger.warn({ reason }, 'database stopped answering; requests that need it get 503'),
    regained: () => logger.info('database answers again'),
  });
  return connection;
}
