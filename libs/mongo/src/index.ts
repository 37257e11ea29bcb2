/**
 * One mongoose connection per service (never the global default), so a process or a test can
 * hold several databases. Commands are not buffered: when the server is away or stops answering,
 * an operation fails (a JSON 503) within OPERATION_BOUND_MS instead of queueing.
 *
 * How the bound is made. The driver that mongoose 9 uses (mongodb 7.8) has no per-operation
 * timeout: `timeoutMS` is accepted and ignored ("has no effect"), and its AbortSignal support is
 * experimental and covers reads only. What it honours are per-attempt bounds, so every way one
 * attempt can wait is bounded by ATTEMPT_MS: the reply on a pooled connection (socket timeout), a
 * new connection's handshake (connect timeout), a free connection (wait-queue timeout), and a
 * reachable server (selection timeout).
 *
 * The driver would retry a read once after any network error, a timeout included, which doubles
 * the worst case. Measured under the fault tests' 4x load on two cores (FerretDB), some attempts
 * of a healthy but busy server take over 800 ms, so two attempts that both fit in the 2 s promise
 * for a paused database would turn that load into 503s (4 of 6,074 requests did, with 800 ms and
 * the retry). One attempt of 1.5 s fits both. The retry is off: it does not fit. What it would have
 * saved, a read on a connection the server reset when it restarted, costs one 503: the driver
 * clears the pool on that first error, so the next requests use fresh connections.
 */
import mongoose, { type Connection } from 'mongoose';

export const ATTEMPT_MS = 1500;
export const OPERATION_BOUND_MS = ATTEMPT_MS;

export interface MongoOptions {
  /** How long an operation waits for a reachable server before failing. */
  serverSelectionTimeoutMS?: number;
  /** How long one attempt waits for the server's reply before its connection is dropped. */
  socketTimeoutMS?: number;
  /** How long opening a connection (TCP and the handshake) may take. */
  connectTimeoutMS?: number;
  /** How long an operation may wait for a connection from the pool (the driver's default: for ever). */
  waitQueueTimeoutMS?: number;
  /** How long `connectMongo` keeps retrying the first connection. */
  startupTimeoutMs?: number;
  onRetry?: (attempt: number, err: unknown) => void;
}

// Operator objects in filters are refused even if a check upstream missed one.
mongoose.set('sanitizeFilter', true);
mongoose.set('strictQuery', true);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Connects with retry (the database may start after us), then returns the open connection. */
export async function connectMongo(url: string, options: MongoOptions = {}): Promise<Connection> {
  const {
    serverSelectionTimeoutMS = ATTEMPT_MS,
    socketTimeoutMS = ATTEMPT_MS,
    connectTimeoutMS = ATTEMPT_MS,
    waitQueueTimeoutMS = ATTEMPT_MS,
    startupTimeoutMs = 30_000,
    onRetry,
  } = options;
  const deadline = Date.now() + startupTimeoutMs;
  for (let attempt = 1; ; attempt++) {
    const connection = mongoose.createConnection(url, {
      serverSelectionTimeoutMS,
      socketTimeoutMS,
      connectTimeoutMS,
      waitQueueTimeoutMS,
      retryReads: false,
      bufferCommands: false,
      autoIndex: true,
      maxPoolSize: 20,
    });
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

/** Readiness: the connection is open and the server answers a ping. */
export async function isMongoReady(connection: Connection): Promise<boolean> {
  if (connection.readyState !== mongoose.ConnectionStates.connected || !connection.db) return false;
  await connection.db.admin().ping();
  return true;
}

export type { Connection };

/**
 * Marks an operator object written by our own code (`{$lt: date}`), so sanitizeFilter lets it
 * through. Never wrap a value that came from a request.
 */
export function trusted<T extends object>(operator: T): T {
  return mongoose.trusted(operator);
}

export { createTurns, HOLD_MS, STALE_MS, type TurnSteps, type Turns, type Versioned } from './turns';
