/**
 * The gateway's way to one service, and the seam below forwarding: what carries a request there
 * and the answer back. The proxy above it (upstream-proxy.ts) writes once what every hop needs:
 * timeouts, errors, logs, metrics and the rules on the answer's headers.
 * - Over the network: an `http.Agent`, a keep-alive connection pool per service, each new
 *   connection to the next replica (connection-pool.ts, replica-rotation.ts).
 * - In the same process (the one-process mode): the service's own request handler, given by the
 *   process (`HostedServices`, @cs/lifecycle), which answers on the client's response itself.
 */
import type { Agent, RequestListener } from 'node:http';
import type { ServiceReach } from '@cs/lifecycle';
import { connectionPool, streamPool } from './connection-pool';

export interface SocketTransport {
  /** The service's base URL: where requests go, and what spans name. */
  readonly target: string;
  /** Makes, pools and retires the connections to the service. */
  readonly agent: Agent;
}

export interface InProcessTransport {
  /** The service's in-process address: what spans name. */
  readonly target: string;
  /** The service's own request handler. */
  readonly handler: RequestListener;
}

export type Transport = SocketTransport | InProcessTransport;

/**
 * The transport to the service at `target`: its handler when this process hosts it, else over the
 * network, with a connection per stream for a service whose answers are long-lived streams.
 */
export function transportTo(target: string, reach: ServiceReach, { streams }: { streams: boolean }): Transport {
  const handler = reach.handlerFor(target);
  if (handler) return { target, handler };
  return { target, agent: streams ? streamPool() : connectionPool() };
}
