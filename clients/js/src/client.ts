/**
 * The typed client: every call's path, parameters, body and answer come from the generated
 * OpenAPI types (schema.ts) through openapi-fetch, so a call the API does not accept does not
 * compile. This file adds what every front end writes by hand otherwise: the session, kept fresh
 * (session-refresh below), one error type per kind of failure, and an optional cache of public
 * reads (etag-cache.ts). The calls themselves are in a file for each service's resources:
 * identity.ts (sessions, the account, others' names), posts.ts, notes.ts and files.ts (uploads).
 */
import createFetchClient, { type Middleware } from 'openapi-fetch';
import type { Page, Result, SessionTokens } from './calls.js';
import { apiErrorOf, ContentClientError, NetworkError, SessionExpiredError } from './errors.js';
import { etagCache } from './etag-cache.js';
import { fileCalls } from './files.js';
import { identityCalls } from './identity.js';
import { type Note, noteCalls } from './notes.js';
import { type Post, postCalls } from './posts.js';
import type { paths } from './schema.js';
import { memoryStore, type Session, type SessionStore } from './session.js';
import { signInCalls } from './sign-in.js';
import {
  type SubscribeOptions,
  type SubscriptionHandlers,
  subscribeWith,
  type Topic,
  type TopicDocuments,
} from './subscribe.js';

export interface ClientOptions {
  /** Where the gateway is: `https://api.example.com`, or '' for the page's own origin. */
  baseUrl?: string;
  /** Where the session is kept; in memory unless given (see `webStorage`). */
  store?: SessionStore;
  /** Called when the session ended (a 401 that no refresh could mend) and was cleared. */
  onSessionExpired?: (error: SessionExpiredError) => void;
  /** Reuse a public read's body when the API answers 304 to its ETag. Off by default. */
  cache?: boolean;
  /** A fetch of your own (to add tracing, say); the global one otherwise. */
  fetch?: typeof fetch;
  /**
   * Cookie mode, for a web page on the API's own origin: the refresh token lives in an HttpOnly
   * cookie that page script cannot read (the API sets it when asked with `X-Refresh-Token:
   * cookie`), and the store holds only the access token. After a reload, or in a new tab,
   * `resume()` gets a fresh access token from the cookie. Off by default: the refresh token is
   * then kept in the store with the session.
   */
  refreshCookie?: boolean;
}

/**
 * Routes that never carry the session's token: they are how one gets, renews or ends a session.
 * (The e-mails' links do carry it: the session that confirms an address change is the one kept.)
 */
const PUBLIC_AUTH = /^\/api\/auth\/(?:register|login|password-reset|refresh|logout|oidc|providers)/;
/** An access token this close to its expiry is renewed before it is sent (a quarter of its life, if shorter). */
const RENEW_BEFORE_MS = 30_000;

/** Whether the access token of `session` is due for renewal before it is sent. */
function dueForRenewal({ token, expiresAt }: Session, now = Date.now()): boolean {
  if (expiresAt === undefined) return false;
  let margin = RENEW_BEFORE_MS;
  try {
    // The contract's JWT says its own lifetime: a token of 5 s is not renewed on every call.
    const { iat, exp } = JSON.parse(atob((token.split('.')[1] ?? '').replace(/-/g, '+').replace(/_/g, '/')));
    if (typeof iat === 'number' && typeof exp === 'number') margin = Math.min(margin, ((exp - iat) * 1000) / 4);
  } catch {
    // Not a JWT this client can read: the fixed margin.
  }
  return expiresAt - now < margin;
}

/**
 * A 401 that says the password given was wrong (changing it or the address, deleting the account),
 * or that an account without one must sign in with its provider again first, rather than that the
 * token is: the session goes on.
 */
async function wrongPassword(response: Response): Promise<boolean> {
  const body = (await response
    .clone()
    .json()
    .catch(() => undefined)) as { error?: unknown } | undefined;
  return /^(?:Invalid credentials$|This account has no password)/.test(String(body?.error));
}

export function createContentClient(options: ClientOptions = {}) {
  const store = options.store ?? memoryStore();
  const doFetch = options.fetch ?? ((input: Request) => fetch(input));
  const raw = createFetchClient<paths>({ baseUrl: options.baseUrl ?? '', fetch: doFetch });
  /** Answers whose 401 ended the session (the request carried its token). */
  const ended = new WeakSet<Response>();
  /** Each protected request as it was before it was sent: sent again once, after a refresh. */
  const unsent = new WeakMap<Request, Request>();
  const cookieMode = options.refreshCookie === true;
  /** What asks the API for cookie mode, on every route of sessions. */
  const modeHeaders: Record<string, string> = cookieMode ? { 'X-Refresh-Token': 'cookie' } : {};
  /** An auth route's address: against baseUrl, or the request's own origin (a page's, when relative). */
  const authUrl = (path: string, request?: Request) =>
    options.baseUrl ? `${options.baseUrl}${path}` : request ? new URL(path, request.url).href : path;
  /** Whether the session can get its next access token: a refresh token here, or the cookie. */
  const renewable = (session: Session) => cookieMode || session.refreshToken !== undefined;

  const keep = (email: string, pair: SessionTokens): Session => {
    const next: Session = {
      email,
      token: pair.token,
      ...('refreshToken' in pair ? { refreshToken: pair.refreshToken } : {}),
      expiresAt: Date.now() + pair.expiresIn * 1000,
      // A refresh does not say it: the session's word stands until an answer that does.
      emailVerified: pair.emailVerified ?? store.load()?.emailVerified,
    };
    store.save(next);
    return next;
  };

  /** POST /api/auth/refresh: with the session's refresh token, or in cookie mode with none. */
  const sendRefresh = (refreshToken: string | undefined, request?: Request) =>
    doFetch(
      new Request(authUrl('/api/auth/refresh', request), {
        method: 'POST',
        headers: cookieMode ? modeHeaders : { 'content-type': 'application/json' },
        ...(cookieMode ? {} : { body: JSON.stringify({ refreshToken }) }),
      }),
    );

  /**
   * The next pair, single-flight: however many calls find the token expired at once, one refresh
   * is sent, and all of them go on with its answer. A session another call or another tab renewed
   * meanwhile (the store shows a newer token) is simply taken. A refresh refused with 401 ends the
   * session (undefined); any other failure leaves it as it is and is thrown.
   */
  let renewing: Promise<Session | undefined> | undefined;
  function renew(stale: Session, request: Request): Promise<Session | undefined> {
    renewing ??= (async () => {
      const current = store.load();
      if (!current) return undefined;
      if (current.token !== stale.token) return current;
      if (!renewable(current)) return undefined;
      const response = await sendRefresh(current.refreshToken, request);
      if (response.status === 401) {
        // Another tab may have spent the token and saved the successor a moment ago.
        const latest = store.load();
        if (latest && latest.token !== current.token) return latest;
        store.clear();
        return undefined;
      }
      if (!response.ok) throw apiErrorOf(response, await response.json().catch(() => undefined), false);
      return keep(current.email, (await response.json()) as SessionTokens);
    })().finally(() => {
      renewing = undefined;
    });
    return renewing;
  }

  const session: Middleware = {
    async onRequest({ request }) {
      let current = store.load();
      if (!current || PUBLIC_AUTH.test(new URL(request.url).pathname)) return request;
      if (renewable(current) && dueForRenewal(current)) {
        const renewed = await renew(current, request);
        if (!renewed) {
          // The session is over (ended elsewhere, or lapsed): the call is not sent.
          const error = new SessionExpiredError('Your session has ended');
          options.onSessionExpired?.(error);
          throw error;
        }
        current = renewed;
      }
      request.headers.set('Authorization', `Bearer ${current.token}`);
      if (renewable(current)) unsent.set(request, request.clone());
      return request;
    },
    async onResponse({ request, response }) {
      if (response.status !== 401 || !request.headers.has('Authorization') || (await wrongPassword(response))) {
        return response;
      }
      const sent = request.headers.get('Authorization')?.slice('Bearer '.length) ?? '';
      const original = unsent.get(request);
      const current = store.load();
      const renewed =
        original && current
          ? await renew(current.token === sent ? current : { ...current, token: sent }, request)
          : undefined;
      if (original && renewed) {
        original.headers.set('Authorization', `Bearer ${renewed.token}`);
        const again = await doFetch(original);
        if (again.status !== 401 || (await wrongPassword(again))) return again;
        response = again;
      }
      store.clear();
      ended.add(response);
      return response;
    },
  };
  raw.use(session);
  if (options.cache) raw.use(etagCache());

  /** The call's answer, or the typed error for its failure. */
  async function run<T>(call: () => Promise<Result<T>>): Promise<T> {
    let result: Result<T>;
    try {
      result = await call();
    } catch (err) {
      if (err instanceof ContentClientError) throw err;
      throw new NetworkError('The API could not be reached', 'api', { cause: err });
    }
    if (result.response.ok) return result.data as T;
    const error = apiErrorOf(result.response, result.error, ended.has(result.response));
    if (ended.has(result.response)) options.onSessionExpired?.(error as SessionExpiredError);
    throw error;
  }

  /** The cursor in a `Link: <…?cursor=…>; rel="next"` header. */
  const nextCursor = (response: Response) => {
    const link = /<([^>]+)>;\s*rel="next"/.exec(response.headers.get('link') ?? '')?.[1];
    return link ? (new URL(link, 'http://x').searchParams.get('cursor') ?? undefined) : undefined;
  };
  async function page<T>(call: () => Promise<Result<T[]>>): Promise<Page<T>> {
    let response: Response | undefined;
    const items = await run(async () => {
      const result = await call();
      response = result.response;
      return result;
    });
    const next = response && nextCursor(response);
    return next ? { items, next } : { items };
  }

  /** What the routes of sessions need of the session's keeping. */
  const keeping = { keep, modeHeaders, renewable, sendRefresh, authUrl };

  /** The access token for a stream: renewed first when it is `expired`, or about to be. */
  const streamToken = async (expired?: string): Promise<string | undefined> => {
    const current = store.load();
    if (!current) return undefined;
    const stale = current.token === expired || dueForRenewal(current);
    if (!stale) return current.token;
    if (!renewable(current)) {
      if (current.token !== expired) return current.token;
      store.clear();
      return undefined;
    }
    return (await renew(current, new Request(authUrl('/api/realtime'))))?.token;
  };

  return {
    /** The openapi-fetch client itself, typed, with the session and errors middleware. */
    raw,
    /** The signed-in person, if any. */
    session: (): Session | undefined => store.load(),
    ...identityCalls(raw, run, keeping, store, cookieMode, doFetch),
    ...signInCalls(raw, run, keeping, doFetch),
    posts: postCalls(raw, run, page),
    notes: noteCalls(raw, run, page),
    /**
     * Live changes of `topics` (`posts`: published posts, public; `my-posts` and `notes`: the
     * signed-in person's), each to the handler of its topic, typed: `{posts: {upsert(post),
     * remove(id)}, reset(), status(s)}`. Resumes where it was after a network loss or an expired
     * token, without a gap. Returns the function that ends it.
     */
    subscribe: <T extends Topic>(
      topics: readonly T[],
      handlers: SubscriptionHandlers<T, TopicDocuments<Post, Note>>,
      subscribeOptions: SubscribeOptions = {},
    ): (() => void) =>
      subscribeWith(
        {
          fetch: doFetch,
          url: (path) => `${options.baseUrl ?? ''}${path}`,
          token: streamToken,
          onSessionExpired: (error) => options.onSessionExpired?.(error),
        },
        topics,
        handlers,
        subscribeOptions,
      ),
    ...fileCalls(raw, run, store),
  };
}

export type ContentClient = ReturnType<typeof createContentClient>;
