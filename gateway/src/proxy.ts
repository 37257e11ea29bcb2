import { type LookupAddress, lookup } from 'node:dns';
import { Agent, type ClientRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { LookupFunction, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { messages, notDelivered } from '@cs/errors';
import { KEEP_ALIVE_TIMEOUT_MS } from '@cs/lifecycle';
import type { Logger } from '@cs/log';
import { type ClientSpan, startClientSpan } from '@cs/telemetry';
import { type Context, context } from '@opentelemetry/api';
import { createProxyMiddleware } from 'http-proxy-middleware';
import { upstreamFailures, upstreamRetries } from './metrics';
import { sendError } from './respond';

export interface ProxyOptions {
  target: string;
  name: string;
  timeoutMs: number;
  /**
   * How long a request that could not reach the upstream (refused, or its name or address gone)
   * is retried before the answer is 502: long enough for a restarted or replaced service to come
   * back. An upstream unreachable for longer than this is down, and its requests fail at once
   * until it answers again.
   */
  retryWindowMs: number;
  /** Whether the services' `Server-Timing` (database and app time) reaches clients. */
  serverTiming: boolean;
  logger: Logger;
}

export type UpstreamProxy = (req: IncomingMessage, res: ServerResponse) => void;

/** How many connections each upstream name has been given: whose turn the next one is. */
const turns = new Map<string, number>();

/**
 * Resolves an upstream's name to every address it has, each new connection starting at the next
 * one in turn. A service scaled to several replicas has one name and an address per replica
 * (Compose's DNS, a Kubernetes headless service); the system resolver sorts them the same way
 * every time, so with its first answer every connection would go to one replica. Node connects
 * to the addresses in the order given and moves on to the next when one refuses
 * (`autoSelectFamily`, on by default), so a replica being replaced costs no request either.
 */
export const nextReplicaFirst: LookupFunction = (hostname, options, callback) => {
  lookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
    if (err) return callback(err, []);
    const sorted = [...addresses].sort((a, b) => (a.address < b.address ? -1 : a.address > b.address ? 1 : 0));
    const turn = turns.get(hostname) ?? 0;
    turns.set(hostname, turn + 1);
    const from = sorted.length > 0 ? turn % sorted.length : 0;
    const ordered = [...sorted.slice(from), ...sorted.slice(0, from)];
    if (options.all) return callback(null, ordered);
    const [first] = ordered;
    if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), []);
    callback(null, first.address, first.family);
  });
};

/**
 * How many requests the gateway sends over one upstream connection before it closes it and opens
 * another. A pool of busy connections would otherwise never open a new one, and a replica added
 * under steady load would get nothing from it; each new connection goes to any replica there is
 * now (`nextReplicaFirst`). A new connection on a local network every 100 requests costs little.
 */
export const REQUESTS_PER_CONNECTION = 100;

/**
 * One keep-alive pool per upstream. Idle sockets are retired a second before the services'
 * announced keep-alive timeout (`Keep-Alive: timeout=5`, which the agent would honour anyway), so
 * we never write a request onto a socket the service is closing, whether on a quiet moment or
 * while it drains for a restart (libs/lifecycle keeps open connections until then). A socket that
 * has carried REQUESTS_PER_CONNECTION requests is closed by us when it comes back to the pool
 * (`keepSocketAlive`, Node's hook for that), while nothing is being written onto it.
 */
class UpstreamAgent extends Agent {
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

/**
 * Sockets one upstream's pool holds at most, busy and idle together (Node counts both against
 * `maxSockets`); requests beyond it wait for one.
 */
const UPSTREAM_MAX_SOCKETS = 256;
let pools = 0;

/**
 * Sockets the upstream pools made so far may hold between them: descriptors the gateway keeps
 * free of client connections (connection-limits.ts).
 */
export function upstreamSocketsMax(): number {
  return pools * UPSTREAM_MAX_SOCKETS;
}

function keepAliveAgent(): Agent {
  pools += 1;
  return new UpstreamAgent({
    keepAlive: true,
    keepAliveMsecs: 1000,
    maxSockets: UPSTREAM_MAX_SOCKETS,
    maxFreeSockets: 64,
    timeout: KEEP_ALIVE_TIMEOUT_MS - 1000,
    lookup: nextReplicaFirst,
  });
}

const TIMED_OUT = 'ETIMEDOUT_UPSTREAM';
/** Methods whose repetition changes nothing more than the first time (RFC 9110 §9.2.2). */
const IDEMPOTENT = new Set(['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS']);

/** Requests whose answers are one person's: see `markPrivate`. */
const privateRequests = new WeakSet<IncomingMessage>();

/**
 * Marks a request whose answer belongs to one person (it carried a token, or it answers with
 * one): the answer gets `Cache-Control: no-store`, whatever the service said, so no browser or
 * shared cache keeps it. Anonymous public reads keep the service's ETag and caching.
 */
export function markPrivate(req: IncomingMessage): void {
  privateRequests.add(req);
}

/** Request bodies, read whole before the first attempt (see `readBody`) so a retry can resend them. */
const bodies = new WeakMap<IncomingMessage, Buffer>();

/**
 * Reads a request's body into memory, at most `maxBytes` (the gateway's body limit, 100 kB by
 * default), because a retry must be able to send it again. Afterwards `Content-Length` describes
 * the body exactly as it will be sent, also when the client sent it chunked.
 */
export function readBody(req: IncomingMessage, maxBytes: number): Promise<'read' | 'too-large' | 'aborted'> {
  const declared = req.headers['content-length'];
  if ((declared === undefined || declared === '0') && req.headers['transfer-encoding'] === undefined) {
    return Promise.resolve('read');
  }
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (outcome: 'read' | 'too-large' | 'aborted') => {
      req.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose);
      resolve(outcome);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) return done('too-large');
      chunks.push(chunk);
    };
    const onEnd = () => {
      const body = Buffer.concat(chunks, size);
      bodies.set(req, body);
      delete req.headers['transfer-encoding'];
      req.headers['content-length'] = String(body.length);
      done('read');
    };
    const onError = () => done('aborted');
    const onClose = () => {
      if (!req.complete) done('aborted');
    };
    req.on('data', onData).on('end', onEnd).on('error', onError).on('close', onClose);
  });
}

interface Attempts {
  count: number;
  firstAt: number;
  last?: ClientRequest;
  /** The request's trace context, the parent of every attempt's span (retries run on timers). */
  context: Context;
  span?: ClientSpan;
}

/**
 * Sends a request to one upstream and streams the answer back. A request that never reached the
 * service (`notDelivered`: it is restarting or being replaced) is retried with backoff within the
 * retry window, for every method, since the body is held; a connection reset before any answer
 * is retried once, for idempotent methods only: a kept-alive socket the service was closing, or a
 * new one still queued when a replica closed its listener to drain. Otherwise a
 * broken connection is a JSON 502, and no answer within `timeoutMs` a JSON 504. Nothing hangs.
 */
export function createUpstreamProxy({
  target,
  name,
  timeoutMs,
  retryWindowMs,
  serverTiming,
  logger,
}: ProxyOptions): UpstreamProxy {
  const attempts = new WeakMap<IncomingMessage, Attempts>();
  /** Since when no new connection has reached the upstream; unset once it answers. */
  let unreachableSince: number | undefined;

  const retryDelay = (req: IncomingMessage, err: NodeJS.ErrnoException, res: ServerResponse): number | undefined => {
    const state = attempts.get(req);
    // (The request stream itself is destroyed once read; the client is gone when its socket is.)
    if (!state || res.headersSent || res.destroyed || req.socket.destroyed) return undefined;
    const now = Date.now();
    if (notDelivered(err)) {
      unreachableSince ??= now;
      if (now - unreachableSince > retryWindowMs) return undefined;
      const delay = Math.min(50 * 2 ** (state.count - 1), 400);
      return now + delay - state.firstAt <= retryWindowMs ? delay : undefined;
    }
    const reset = err.code === 'ECONNRESET' || err.code === 'EPIPE';
    if (reset && state.count === 1 && IDEMPOTENT.has(req.method ?? '')) return 0;
    return undefined;
  };

  const proxy = createProxyMiddleware<IncomingMessage, ServerResponse>({
    target,
    agent: keepAliveAgent(),
    changeOrigin: false,
    xfwd: false,
    on: {
      proxyReq(proxyReq, req) {
        const state = attempts.get(req);
        if (state) {
          state.last = proxyReq;
          const method = req.method ?? 'GET';
          state.span = startClientSpan(method, `${target}${proxyReq.path}`, method, state.context);
          for (const [header, value] of Object.entries(state.span.headers)) proxyReq.setHeader(header, value);
        }
        proxyReq.setTimeout(timeoutMs, () => {
          proxyReq.destroy(Object.assign(new Error(`${name} did not answer in ${timeoutMs} ms`), { code: TIMED_OUT }));
        });
        const body = bodies.get(req);
        if (body) proxyReq.write(body);
      },
      proxyRes(proxyRes, req) {
        unreachableSince = undefined;
        const span = attempts.get(req)?.span;
        if (span) proxyRes.once('close', () => span.end(proxyRes.statusCode ?? 0));
        // Headers are copied to the client's answer after this event.
        if (privateRequests.has(req)) proxyRes.headers['cache-control'] = 'no-store';
        if (!serverTiming) delete proxyRes.headers['server-timing'];
      },
      error(err, req, res) {
        const code = (err as NodeJS.ErrnoException).code;
        attempts.get(req)?.span?.end(err);
        if (!('setHeader' in res)) return (res as Socket).destroy();
        const delay = retryDelay(req, err as NodeJS.ErrnoException, res);
        if (delay !== undefined) {
          const state = attempts.get(req) as Attempts;
          state.count += 1;
          upstreamRetries.inc({ upstream: name });
          // Each attempt adds the proxy's listeners to the client's response until it ends; a
          // request retried through a long window (about 30 attempts in 10 s) is not a leak.
          if (state.count >= 8) res.setMaxListeners(Math.max(res.getMaxListeners(), state.count + 8));
          logger.debug(
            { upstream: name, code, attempt: state.count, requestId: req.headers['x-request-id'] },
            'retrying',
          );
          setTimeout(() => void proxy(req, res, () => {}), delay);
          return;
        }
        const timedOut = code === TIMED_OUT;
        logger.error(
          {
            upstream: name,
            code,
            requestId: req.headers['x-request-id'],
            path: req.url,
            attempts: attempts.get(req)?.count,
          },
          'upstream failed',
        );
        if (res.headersSent) return res.destroy();
        upstreamFailures.inc({ upstream: name, status: timedOut ? 504 : 502 });
        sendError(res, timedOut ? 504 : 502, timedOut ? messages.upstreamTimeout : messages.upstreamUnavailable);
      },
    },
  });

  return (req, res) => {
    attempts.set(req, { count: 1, firstAt: Date.now(), context: context.active() });
    void proxy(req, res, () => {});
  };
}
