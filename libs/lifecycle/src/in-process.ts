/**
 * Services hosted in this process, reached without a socket. When one process runs the gateway
 * and every service (SERVICES=all, server/), each service is hosted under an address of its own,
 * `http://<name>.in-process`, that no socket serves. The configuration names it as it would name
 * a real address (POSTS_URL=http://posts.in-process), and what reaches services hands a request
 * for it to the service's app in memory: `serviceFetch` here (calls between services, the
 * revocation feed, readiness checks), and the gateway's proxy (gateway/src/upstream). Any other
 * address is reached over the network, as when each service runs in a process of its own.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import inject from 'light-my-request';
import { Agent } from 'undici';

export type RequestListener = (req: IncomingMessage, res: ServerResponse) => void;

const hosted = new Map<string, RequestListener>();

/** The address a service hosted in this process is reached at. */
export function inProcessUrl(name: string): string {
  return `http://${name}.in-process`;
}

/** Hosts `listener` (an app's callback) at `inProcessUrl(name)`, until the returned stop(). */
export function hostInProcess(name: string, listener: RequestListener): { url: string; stop(): void } {
  const url = inProcessUrl(name);
  if (hosted.has(url)) throw new Error(`${name} is already hosted in this process`);
  hosted.set(url, listener);
  return { url, stop: () => hosted.delete(url) };
}

/** The app hosted in this process at `url`'s origin; undefined for an address on the network. */
export function hostedAt(url: string): RequestListener | undefined {
  if (hosted.size === 0) return undefined;
  return hosted.get(new URL(url).origin);
}

/**
 * The connections of calls to services over the network. Fetch's own pool would keep an idle
 * socket for as long as the service announces (`Keep-Alive: timeout=30`, less a second), and a
 * draining service would wait that long for it; this one retires idle sockets after 4 s, as the
 * gateway's pool does, long before a service would close them (SERVICE_KEEP_ALIVE_TIMEOUT_MS).
 */
const toServices = new Agent({ keepAliveTimeout: 4_000, keepAliveMaxTimeout: 4_000 });

/** What a 204, 205 or 304 answer must be sent as: no body at all. */
const NO_BODY = new Set([101, 204, 205, 304]);

/**
 * `fetch`, for calls from one of our processes to a service: handed to the app in memory when the
 * service is hosted in this process, else sent over the network. The answer is a `Response`
 * either way, and an `init.signal` that aborts (a timeout) rejects as fetch's does.
 */
export async function serviceFetch(url: string, init: RequestInit = {}): Promise<Response> {
  const listener = hostedAt(url);
  // `dispatcher` is Node's fetch's own option; its type is undici's, which RequestInit leaves out.
  if (!listener) return fetch(url, { ...init, dispatcher: toServices } as RequestInit);
  const { signal } = init;
  signal?.throwIfAborted();
  const answered = inject(listener, {
    method: (init.method ?? 'GET') as 'GET',
    url,
    headers: Object.fromEntries(new Headers(init.headers).entries()),
    ...(init.body === undefined || init.body === null ? {} : { payload: init.body as string | Buffer }),
  });
  const answer = signal
    ? await new Promise<Awaited<typeof answered>>((resolve, reject) => {
        const abort = () => reject(signal.reason);
        signal.addEventListener('abort', abort, { once: true });
        answered.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
      })
    : await answered;
  const headers = new Headers();
  for (const [name, value] of Object.entries(answer.headers)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, String(one));
  }
  return new Response(NO_BODY.has(answer.statusCode) ? null : answer.rawPayload, {
    status: answer.statusCode,
    headers,
  });
}
