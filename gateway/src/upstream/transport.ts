/**
 * The gateway's way to one service, and the seam below forwarding: what carries a request's
 * bytes there and the answer's back. Retries, timeouts, spans, error mapping, logs, metrics and
 * the rules on the answer's headers sit above it (upstream-proxy.ts), written once for every
 * transport.
 *
 * A transport is an `http.Agent`, because that is the one place Node lets a caller choose how a
 * connection is made:
 * - over the network, a keep-alive connection pool per service, each new connection to the next
 *   replica (connection-pool.ts, replica-rotation.ts);
 * - in memory, to a service hosted in the same process (the one-process mode): the agent of
 *   `HostedServices` (@cs/lifecycle), whose connections are made in memory to the service's
 *   own HTTP server, with no socket.
 */
import type { Agent } from 'node:http';
import type { ServiceReach } from '@cs/lifecycle';
import { connectionPool, streamPool } from './connection-pool';

export interface Transport {
  /** The service's base URL: where requests go, and what spans name. */
  readonly target: string;
  /** Makes, pools and retires the connections to the service. */
  readonly agent: Agent;
}

/**
 * The transport to the service at `target`: in memory when this process hosts it, else over the
 * network, with a connection per stream for a service whose answers are long-lived streams.
 */
export function transportTo(target: string, reach: ServiceReach, { streams }: { streams: boolean }): Transport {
  const agent = reach.agentFor(target) ?? (streams ? streamPool() : connectionPool());
  return { target, agent };
}
