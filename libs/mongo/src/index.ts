/**
 * One mongoose connection per service (never the global default), so a process or a test can
 * hold several databases. Commands are not buffered: when the server is away or stops answering,
 * an operation fails (a JSON 503) within UNRESPONSIVE_BOUND_MS (1.5 s) instead of queueing.
 *
 * How. The driver that mongoose 9 uses (mongodb 7.8) has no per-operation timeout: `timeoutMS` is
 * accepted and ignored ("has no effect"), and its AbortSignal support is experimental and covers
 * reads only. A per-attempt socket timeout short enough for a paused server (measured: 800 ms,
 * with the driver's one retry of reads) also cut off healthy operations of a busy server: under
 * the fault tests' 4x load on two cores, FerretDB takes over 1.5 s for a few of them. A paused
 * server and a busy one differ in one thing: the busy one still answers a `hello`. So the bound
 * comes from the driver's own monitoring:
 * - it checks the server every HEARTBEAT_MS, and a check that gets no answer within
 *   CHECK_TIMEOUT_MS marks the server unknown and clears the pool, interrupting every operation
 *   in flight on it (the driver labels that error InterruptInUseConnections);
 * - an operation that starts then waits for a server at most CHECK_TIMEOUT_MS (selection), and a
 *   new connection's handshake as long (so the pool keeps warm connections: warm-pool.ts);
 * - on a server that answers, one operation may take OPERATION_BOUND_MS (socket timeout), and so
 *   may the wait for a pooled connection: a safety net for a query that never returns.
 * The driver would retry a read once after such an error, after waiting for a server again: that
 * does not fit in the 2 s promise, so retryReads is off. What the retry would have saved, a read
 * on a connection the restarted server reset, costs one 503: the pool is cleared on that error.
 */

import { setTimeout as sleep } from 'node:timers/promises';
import { metricsEnabled } from '@cs/telemetry';
import mongoose, { type Connection } from 'mongoose';
import { CHECK_TIMEOUT_MS, HEARTBEAT_MS, OPERATION_BOUND_MS } from './bounds';
import { observeOperations, watchPool } from './observe';
import { countOpenConnections, isWarm, WARM_CONNECTIONS } from './warm-pool';

export { CHECK_TIMEOUT_MS, HEARTBEAT_MS, OPERATION_BOUND_MS, UNRESPONSIVE_BOUND_MS } from './bounds';
export { WARM_CONNECTIONS } from './warm-pool';

export interface MongoOptions {
  /** How often the driver checks that the server answers. */
  heartbeatFrequencyMS?: number;
  /** How long an operation waits for a reachable server before failing. */
  serverSelectionTimeoutMS?: number;
  /** How long one attempt waits for the server's reply before its connection is dropped. */
  socketTimeoutMS?: number;
  /** How long opening a connection (TCP and the handshake), and one heartbeat check, may take. */
  connectTimeoutMS?: number;
  /** How long an operation may wait for a connection from the pool (the driver's default: for ever). */
  waitQueueTimeoutMS?: number;
  /** How long `connectMongo` keeps retrying the first connection. */
  startupTimeoutMs?: number;
  /**
   * How many services' databases the pool serves: it opens at most MAX_POOL_SIZE connections for
   * each, and keeps WARM_CONNECTIONS of them open while idle (warm-pool.ts).
   */
  databases?: number;
  onRetry?: (attempt: number, err: unknown) => void;
}

// Operator objects in filters are refused even if a check upstream missed one.
mongoose.set('sanitizeFilter', true);
mongoose.set('strictQuery', true);

/** A service's share of its pool: the connections its operations may have under way at once. */
export const MAX_POOL_SIZE = 20;

/** Connects with retry (the database may start after us), then returns the open connection. */
export async function connectMongo(url: string, options: MongoOptions = {}): Promise<Connection> {
  const {
    heartbeatFrequencyMS = HEARTBEAT_MS,
    serverSelectionTimeoutMS = CHECK_TIMEOUT_MS,
    socketTimeoutMS = OPERATION_BOUND_MS,
    connectTimeoutMS = CHECK_TIMEOUT_MS,
    waitQueueTimeoutMS = OPERATION_BOUND_MS,
    startupTimeoutMs = 30_000,
    databases = 1,
    onRetry,
  } = options;
  const deadline = Date.now() + startupTimeoutMs;
  const maxPoolSize = MAX_POOL_SIZE * databases;
  for (let attempt = 1; ; attempt++) {
    const connection = mongoose.createConnection(url, {
      heartbeatFrequencyMS,
      serverSelectionTimeoutMS,
      socketTimeoutMS,
      connectTimeoutMS,
      waitQueueTimeoutMS,
      retryReads: false,
      bufferCommands: false,
      autoIndex: true,
      maxPoolSize,
      minPoolSize: WARM_CONNECTIONS * databases,
    });
    // Before the first connection opens, so the pool's counts start from it, and before any
    // model is compiled on it.
    if (metricsEnabled()) watchPool(connection, maxPoolSize);
    countOpenConnections(connection);
    observeOperations(connection);
    try {
      await connection.asPromise();
      return connection;
    } catch (err) {
      await connection.close().catch(() => undefined);
      if (Date.now() + 500 > deadline) throw err;
      onRetry?.(attempt, err);
      await sleep(Math.min(250 * 2 ** attempt, 2000));
    }
  }
}

/**
 * `name`, a database on the server `server` is connected to, through that connection's client:
 * its pool, its monitor and its sockets. Its models are observed as `connectMongo`'s are. Closing
 * it would close the client: the one who opened `server` closes it.
 */
export function databaseOn(server: Connection, name: string): Connection {
  const database = server.useDb(name, { useCache: true });
  observeOperations(database);
  return database;
}

/** Readiness: the connection is open, its pool holds its warm connections, and the server answers a ping. */
export async function isMongoReady(connection: Connection): Promise<boolean> {
  if (connection.readyState !== mongoose.ConnectionStates.connected || !connection.db) return false;
  if (!isWarm(connection)) return false;
  await connection.db.admin().ping();
  return true;
}

export type { Connection };

/**
 * Reports when the driver's monitor finds the server unreachable (every operation fails with a
 * 503 from then on) and when it answers again: the two moments an operator needs, logged once
 * each rather than once per failed request.
 */
export function watchReachability(
  connection: Connection,
  report: { lost(reason: string): void; regained(): void },
): void {
  connection.getClient().on('serverDescriptionChanged', ({ previousDescription, newDescription }) => {
    const was = previousDescription.type !== 'Unknown';
    const is = newDescription.type !== 'Unknown';
    if (was && !is) report.lost(String(newDescription.error?.message ?? 'no answer'));
    else if (!was && is) report.regained();
  });
}

export { backlogOf } from './backlog';
export { databaseIn, withDatabase } from './database-url';
export { createDeletedAccounts, type DeletedAccounts, PURGE_AGAIN_EVERY_MS } from './deleted-accounts';
export { modelOf } from './model-of';
export { appendNumbered, readNumbered } from './numbered-log';
export { type Change, type OwnedDocuments, ownedDocuments } from './owned-documents';
export { type Cursor, decodeCursor, findPage, NEWEST_FIRST, type Page } from './pages';
export { raceBackoffMs } from './race-backoff';
export { decodeSearchCursor, type SearchPageQuery, searchPage } from './search-page';
export { batchedByTurn, insertTogether, type Outcome } from './together';
export { trusted } from './trusted';
export {
  createTurns,
  HOLD_MS,
  STALE_MS,
  type TurnSteps,
  type Turns,
  type Versioned,
} from './turns';
export { claimedByInsert, isDuplicateKey, onlyDuplicateKeys, upsertRacing } from './unique-key';
