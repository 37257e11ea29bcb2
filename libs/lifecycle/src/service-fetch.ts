/**
 * `fetch`, for calls from one of our processes to a service: the revocation feed, readiness checks
 * and the calls between services. How the request travels is the caller's to choose: over the
 * network (`networkFetch`), or through an agent that carries it in memory to a service hosted in
 * the same process (`fetchThrough`, hosted-services.ts). The answer is a `Response` either way, and
 * an `init.signal` that aborts (a timeout) rejects as fetch's does.
 */
import { type Agent, type IncomingMessage, request } from 'node:http';
import { Agent as Dispatcher } from 'undici';

export type ServiceFetch = (url: string, init?: RequestInit) => Promise<Response>;

/**
 * The connections of calls to services over the network. Fetch's own pool would keep an idle
 * socket for as long as the service announces (`Keep-Alive: timeout=30`, less a second), and a
 * draining service would wait that long for it; this one retires idle sockets after 4 s, as the
 * gateway's pool does, long before a service would close them (SERVICE_KEEP_ALIVE_TIMEOUT_MS).
 */
const toServices = new Dispatcher({ keepAliveTimeout: 4_000, keepAliveMaxTimeout: 4_000 });

export const networkFetch: ServiceFetch = (url, init = {}) =>
  // `dispatcher` is Node's fetch's own option; its type is undici's, which RequestInit leaves out.
  fetch(url, { ...init, dispatcher: toServices } as RequestInit);

/** What a 204, 205 or 304 answer must be sent as: no body at all. */
const NO_BODY = new Set([101, 204, 205, 304]);

/**
 * `fetch` over `agent`'s connections: Node's HTTP client, whose answer, read whole, becomes a
 * `Response`. Calls between services are small JSON, so the whole answer is no burden.
 */
export function fetchThrough(agent: Agent): ServiceFetch {
  return (url, init = {}) =>
    new Promise<Response>((resolve, reject) => {
      const req = request(url, {
        agent,
        method: init.method ?? 'GET',
        headers: Object.fromEntries(new Headers(init.headers).entries()),
        signal: init.signal ?? undefined,
      });
      req.on('error', (err) => reject(init.signal?.aborted ? init.signal.reason : err));
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => resolve(responseOf(res, Buffer.concat(chunks))));
      });
      req.end(init.body ?? undefined);
    });
}

function responseOf(res: IncomingMessage, body: Buffer): Response {
  const headers = new Headers();
  for (const [name, value] of Object.entries(res.headers)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
  }
  const status = res.statusCode ?? 502;
  return new Response(NO_BODY.has(status) ? null : body, { status, headers });
}
