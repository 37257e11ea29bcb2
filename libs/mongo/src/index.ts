/**
 * One mongoose connection per service (never the global default), so a process or a test can
 * hold several databases. Commands are not buffered: when the server is away an operation fails
 * within the selection timeout (a 503), and when it stops answering, within the socket timeout,
 * instead of queueing until the client gives up.
 */
import mongoose, { type Connection } from 'mongoose';

export interface MongoOptions {
  /** How long an operation waits for a reachable server before failing. */
  serverSelectionTimeoutMS?: number;
  /**
   * How long an operation may wait for the server's reply. Without it, a server that stops
   * answering without closing its connections (paused, or cut off by the network) holds every
   * request until the client gives up; with it, they fail as 503 and the connections are
   * replaced. Every query of ours takes milliseconds, so 3 s is far beyond a slow one.
   */
  socketTimeoutMS?: number;
  /**
   * How long opening a connection (TCP and the handshake) may take. A paused server's kernel
   * still accepts connections, and the handshake then waits for ever without it.
   */
  connectTimeoutMS?: number;
  /**
   * How long an operation may wait for a connection from the pool. The driver's default is for
   * ever: while the server is paused, operations queued behind hung connections waited it out.
   */
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
    serverSelectionTimeoutMS = 1500,
    socketTimeoutMS = 3000,
    connectTimeoutMS = 2000,
    waitQueueTimeoutMS = 3000,
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
