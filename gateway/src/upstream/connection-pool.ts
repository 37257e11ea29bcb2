/**
 * The connections to a service: each must open within CONNECT_TIMEOUT_MS, whatever the agent.
 *
 * One keep-alive pool of connections per upstream. Idle sockets are retired after 4 s, long
 * before the services' announced keep-alive timeout (`Keep-Alive: timeout=30`,
 * SERVICE_KEEP_ALIVE_TIMEOUT_MS), so we never write a request onto a socket the service is
 * closing, even with this event loop late by seconds, whether on a quiet moment or while the
 * service drains for a restart (libs/lifecycle keeps open connections until then). A
 * socket that has carried REQUESTS_PER_CONNECTION requests is closed by us when it comes back to
 * the pool (`keepSocketAlive`, Node's hook for that), while nothing is being written onto it.
 */
import { Agent, type ClientRequestArgs } from 'node:http';
import { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { CONNECT_TIMED_OUT } from '@cs/errors';
import { nextReplicaFirst } from './replica-rotation';

/**
 * How many requests the gateway sends over one upstream connection before it closes it and opens
 * another. A pool of busy connections would otherwise never open a new one, and a replica added
 * under steady load would get nothing from it; each new connection goes to any replica there is
 * now (`nextReplicaFirst`). A new connection on a local network every 100 requests costs little.
 */
export const REQUESTS_PER_CONNECTION = 100;

/**
 * Sockets one upstream's pool holds at most, busy and idle together (Node counts both against
 * `maxSockets`); requests beyond it wait for one.
 */
const UPSTREAM_MAX_SOCKETS = 256;
/** How long a pooled socket may stay idle before the gateway closes it. */
const IDLE_SOCKET_RETIRED_MS = 4_000;
let pools = 0;
let streamPools = 0;

/**
 * Sockets the upstream pools made so far may hold between them: descriptors the gateway keeps
 * free of client connections (connection-limits.ts). Unbounded once there is a pool of streams:
 * every client connection may then hold one upstream socket.
 */
export function upstreamSocketsMax(): number {
  return streamPools > 0 ? Number.POSITIVE_INFINITY : pools * UPSTREAM_MAX_SOCKETS;
}

/**
 * How long a new connection to a service may take to open. On the services' network one opens in
 * well under a millisecond, or is refused at once; one whose handshake goes unanswered (an
 * address still in DNS whose container is gone, a replica whose queue of new connections is full)
 * would wait for the kernel's own bound, about two minutes: Node's request timeout starts only
 * once the socket is connected. Past this bound the connection is given up with nothing sent on
 * it, and the request goes again to the next replica (retry-policy.ts), whatever its method.
 * HAProxy's bound in front of the gateways (`timeout connect`, ops/haproxy/haproxy.cfg) is the same.
 */
export const CONNECT_TIMEOUT_MS = 2_000;

/** An agent whose every new connection must open within CONNECT_TIMEOUT_MS. */
class ServiceAgent extends Agent {
  override createConnection(
    options: ClientRequestArgs,
    callback?: (err: Error | null, stream: Duplex) => void,
  ): Duplex | null | undefined {
    const socket = super.createConnection(options, callback);
    if (socket instanceof Socket && socket.connecting) {
      const target = `${options.host ?? options.hostname}:${options.port}`;
      const timer = setTimeout(() => {
        const message = `connection to ${target} did not open within ${CONNECT_TIMEOUT_MS} ms`;
        socket.destroy(Object.assign(new Error(message), { code: CONNECT_TIMED_OUT }));
      }, CONNECT_TIMEOUT_MS);
      const opened = () => clearTimeout(timer);
      socket.once('connect', opened).once('close', opened);
    }
    return socket;
  }
}

class RetiringAgent extends ServiceAgent {
  private readonly uses = new WeakMap<Duplex, number>();

  /** False: Node destroys the socket instead of pooling it. */
  override keepSocketAlive(socket: Duplex): boolean {
    const uses = (this.uses.get(socket) ?? 0) + 1;
    this.uses.set(socket, uses);
    if (uses >= REQUESTS_PER_CONNECTION) return false;
    super.keepSocketAlive(socket); // keep-alive probes and the idle timeout; Node's returns true
    return true;
  }
}

export function connectionPool(): Agent {
  pools += 1;
  return new RetiringAgent({
    keepAlive: true,
    keepAliveMsecs: 1000,
    maxSockets: UPSTREAM_MAX_SOCKETS,
    maxFreeSockets: 64,
    timeout: IDLE_SOCKET_RETIRED_MS,
    lookup: nextReplicaFirst,
  });
}

/**
 * The connections to a service of long-lived streams (realtime): one per stream, for as long as
 * it lasts, so no cap of its own (a capped pool would leave the 257th stream waiting for a socket
 * that never comes back); the connection budget bounds them, one per client connection. A stream
 * is not followed by another request on its connection (it answers `Connection: close`), so none
 * is kept alive. Each new connection goes to the next replica, as the pools' do.
 */
export function streamPool(): Agent {
  streamPools += 1;
  return new ServiceAgent({ keepAlive: false, maxSockets: Number.POSITIVE_INFINITY, lookup: nextReplicaFirst });
}
