/**
 * The gateway's way to one service, and the seam below forwarding: what carries a request's
 * bytes there and the answer's back. Retries, spans and error mapping sit above it
 * (upstream-proxy.ts) and work the same whatever the transport.
 *
 * Today's transport is HTTP over TCP: a keep-alive connection pool per service, each new
 * connection to the next replica (connection-pool.ts, replica-rotation.ts). A transport is an
 * `http.Agent` because that is the one place Node lets a caller choose how a connection is made:
 * an in-memory transport (every service in one process) is an agent whose `createConnection`
 * returns one end of an in-process stream pair and hands the other to the service's server
 * (`server.emit('connection', socket)`), and it fails with the same codes (ECONNREFUSED when the
 * service is not there) so that retries and error mapping keep their meaning.
 */
import type { Agent } from 'node:http';
import { connectionPool, streamPool } from './connection-pool';

export interface Transport {
  /** The service's base URL: where requests go, and what spans name. */
  readonly target: string;
  /** Makes, pools and retires the connections to the service. */
  readonly agent: Agent;
}

export function httpTransport(target: string): Transport {
  return { target, agent: connectionPool() };
}

/** The same, to a service whose answers are long-lived streams: a connection per stream. */
export function streamTransport(target: string): Transport {
  return { target, agent: streamPool() };
}
