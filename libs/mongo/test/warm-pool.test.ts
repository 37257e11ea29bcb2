/**
 * Warm connections (warm-pool.ts), against the run's real MongoDB-protocol server behind a
 * pass-through that can make each new connection slow to greet: the server answers, but the
 * handshake takes longer than its bound, as a starved host's did in a rolling update.
 */
import { createServer, type Socket, connect as tcpConnect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { eventually, testDatabaseUrl } from '@cs/testkit';
import { afterEach, describe, expect, it } from '@jest/globals';
import { CHECK_TIMEOUT_MS, type Connection, connectMongo, isMongoReady, WARM_CONNECTIONS } from '../src/index';

/** Past the handshake's bound: a connection opened while slow fails. */
const GREETING_DELAY_MS = CHECK_TIMEOUT_MS + 500;

interface SlowToGreet {
  /** `url`, through the pass-through. */
  url: string;
  /** While set, each new connection hears nothing from the server for GREETING_DELAY_MS. */
  slow: boolean;
  /** Connections the pass-through has taken. */
  opened: number;
  close(): void;
}

async function slowToGreet(url: string): Promise<SlowToGreet> {
  const target = new URL(url);
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    self.opened += 1;
    const upstream = tcpConnect(Number(target.port), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    if (!self.slow) {
      upstream.pipe(client);
      return;
    }
    // Unpiped, the server's answer waits in the socket's buffer.
    const greeting = setTimeout(() => upstream.pipe(client), GREETING_DELAY_MS);
    upstream.on('close', () => clearTimeout(greeting));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const through = new URL(url);
  through.host = `127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  const self: SlowToGreet = {
    url: through.toString(),
    slow: false,
    opened: 0,
    close() {
      for (const socket of sockets) socket.destroy();
      server.close();
    },
  };
  return self;
}

describe('warm connections', () => {
  let passThrough: SlowToGreet | undefined;
  let connection: Connection | undefined;

  afterEach(async () => {
    await connection?.close();
    passThrough?.close();
  });

  it('when its pool cannot open its warm connections in time, then the process is not ready, and it is once they open', async () => {
    passThrough = await slowToGreet(testDatabaseUrl(__filename));
    connection = await connectMongo(passThrough.url);
    const open = connection;
    passThrough.slow = true;

    // Each warm connection's handshake now fails, and is tried again; nothing else is wrong.
    await sleep(3 * GREETING_DELAY_MS);
    expect(await isMongoReady(open)).toBe(false);

    passThrough.slow = false;
    await eventually('the process is ready', () => isMongoReady(open));
  });

  it('when warm, then operations that come at once each take an open connection, however slow a new one is to open', async () => {
    passThrough = await slowToGreet(testDatabaseUrl(__filename));
    connection = await connectMongo(passThrough.url);
    const open = connection;
    await eventually('the process is ready', () => isMongoReady(open));
    const opened = passThrough.opened;
    passThrough.slow = true;

    // Reads: the driver does not try them again (index.ts), so one that opened a connection
    // too slowly would fail, as two did in the rolling update.
    const things = open.collection('things');
    const outcomes = await Promise.allSettled(
      Array.from({ length: WARM_CONNECTIONS }, (_, i) => things.findOne({ i })),
    );

    expect(outcomes.filter((outcome) => outcome.status === 'rejected')).toEqual([]);
    expect(passThrough.opened).toBe(opened);
  });
});
