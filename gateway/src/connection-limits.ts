/**
 * Bounds on the connections the gateway holds, so that no client can take the file descriptors
 * everyone's requests need. A security review held 2 × 10,100 idle, half-sent requests: the
 * gateway reached 19,999 of its 20,000 descriptors, and a bystander got refused connections and
 * 502s (EMFILE when the gateway opened its upstream socket).
 *
 * - Per client address (`connectionCap`): at most `perAddress` connections at once. Past it, the
 *   connection's request is answered 429 `{error}` with `Retry-After` and the connection closed;
 *   one that sends no request within REFUSED_GRACE_MS is closed without a word. Answering the
 *   request rather than closing at accept: a client (an office's browser) then sees why, and a
 *   response written before the request was read can be lost to a reset. Addresses are counted as
 *   the rate limits count them: IPv4 whole, IPv6 by its /56, which one subscriber holds entirely.
 *   A peer that is a trusted proxy (TRUST_PROXY) is not counted: behind a balancer every
 *   connection comes from it, and the balancer caps per client address instead
 *   (dev/devstack/src/balancer.ts, ops/haproxy/haproxy.cfg).
 * - In all (`maxConnections`): what the open-files limit leaves once the upstream pools and a
 *   reserve have theirs, so a request that was let in can always open its upstream socket. Past
 *   it Node closes new connections at once.
 * - Sockets that never finish their headers are closed by libs/lifecycle (HEADERS_TIMEOUT_MS).
 */
import { readFileSync } from 'node:fs';
import type { RequestListener, Server } from 'node:http';
import type { Socket } from 'node:net';
import { messages } from '@cs/errors';
import { ipKeyGenerator } from 'express-rate-limit';
import { sendError } from './respond';

/** How long a connection over its address's cap has to send the request that gets the 429. */
export const REFUSED_GRACE_MS = 1_000;

export interface ConnectionCapOptions {
  /** Connections one client address may hold at once; 0 turns the cap off. */
  perAddress: number;
  /** Whether a peer is a proxy in front of the clients (TRUST_PROXY), whose connections are not counted. */
  isProxy: (address: string) => boolean;
  /** Told of every connection refused. */
  onRefused?: () => void;
}

export interface ConnectionCap {
  /** Counts the server's connections (before it listens). */
  attach(server: Server): void;
  /** The request listener, with the requests of refused connections answered 429 instead. */
  guard(listener: RequestListener): RequestListener;
}

export function connectionCap({ perAddress, isProxy, onRefused }: ConnectionCapOptions): ConnectionCap {
  const open = new Map<string, number>();
  const refused = new WeakSet<Socket>();

  const onConnection = (socket: Socket) => {
    const address = socket.remoteAddress;
    if (!address || isProxy(address)) return;
    const key = ipKeyGenerator(address);
    const held = open.get(key) ?? 0;
    if (held >= perAddress) {
      refused.add(socket);
      onRefused?.();
      const timer = setTimeout(() => socket.destroy(), REFUSED_GRACE_MS);
      socket.on('close', () => clearTimeout(timer));
      return;
    }
    open.set(key, held + 1);
    // Emitted once per socket; `on` spares the wrapper `once` makes (a stream holds its socket for hours).
    socket.on('close', () => {
      const left = (open.get(key) ?? 1) - 1;
      if (left > 0) open.set(key, left);
      else open.delete(key);
    });
  };

  return {
    attach(server) {
      if (perAddress > 0) server.on('connection', onConnection);
    },
    guard(listener) {
      return function refuseOverCap(req, res) {
        if (!refused.has(req.socket)) return listener(req, res);
        req.resume();
        sendError(res, 429, messages.tooManyConnections, { 'retry-after': '1', connection: 'close' });
      };
    },
  };
}

/**
 * Descriptors kept for everything but client and upstream sockets: the listening socket, stdio
 * and log files, Redis, the metrics listener and its scrapes, trace exports, DNS.
 */
export const RESERVED_DESCRIPTORS = 256;

/**
 * How many client connections fit in `openFiles` descriptors, when the upstream pools may hold
 * `upstreamSockets` between them. A client connection uses at most one upstream socket at a time
 * (a streamed answer holds it as long as it lasts), so C + min(C, upstreamSockets) + the reserve
 * must fit.
 */
export function connectionBudget(openFiles: number, upstreamSockets: number): number {
  const room = openFiles - RESERVED_DESCRIPTORS;
  return Math.max(room - upstreamSockets, Math.floor(room / 2), 0);
}

/**
 * The process's limit on open files (Node raises its soft limit to the hard one at start), from
 * Linux's /proc; undefined where it cannot be read, or when there is none.
 */
export function openFilesLimit(limitsFile = '/proc/self/limits'): number | undefined {
  try {
    const match = /^Max open files\s+(\d+)/m.exec(readFileSync(limitsFile, 'utf8'));
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}
