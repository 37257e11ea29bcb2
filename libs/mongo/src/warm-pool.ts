/**
 * The connections a pool keeps open while idle, so that a request takes one that is open instead
 * of opening its own. Opening one is a handshake, bounded like a heartbeat check (CHECK_TIMEOUT_MS,
 * 1 s) so that a silent server is found out; a server that still answers but is starved of CPU
 * can take longer, and the request that opened the connection then failed with a 503. That is what
 * a rolling update on two cores did: a new posts task, whose pool held only the connection its
 * readiness check had used, opened one for each request that came at once, and two handshakes
 * took 1.2 s. The driver opens the warm ones in the background (`minPoolSize`), where a slow
 * handshake fails nobody and is tried again, and a process is ready only once it holds them.
 */
import type { Connection } from 'mongoose';

/** The connections a pool keeps open for each database it serves. */
export const WARM_CONNECTIONS = 4;

type Client = ReturnType<Connection['getClient']>;

/** Of each client counted, its pool's connections that are open: handshake done, not yet closed. */
const openConnections = new WeakMap<Client, Set<number | string>>();

/** Counts the pool's open connections from the driver's pool events; before it opens any. */
export function countOpenConnections(connection: Connection): void {
  const client = connection.getClient();
  const open = new Set<number | string>();
  client.on('connectionReady', ({ connectionId }) => open.add(connectionId));
  client.on('connectionClosed', ({ connectionId }) => open.delete(connectionId));
  openConnections.set(client, open);
}

/** Whether the pool holds its warm connections. A client whose connections are not counted is. */
export function isWarm(connection: Connection): boolean {
  const client = connection.getClient();
  const open = openConnections.get(client);
  return open === undefined || open.size >= (client.options.minPoolSize ?? 0);
}
