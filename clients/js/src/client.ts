/**
 * The typed client: every call's path, parameters, body and answer come from the generated
 * OpenAPI types (schema.ts) through openapi-fetch, so a call the API does not accept does not
 * compile. This file adds what every front end writes by hand otherwise: the session, kept fresh
 * (session-refresh below), one error type per kind of failure, and an optional cache of public
 * reads.
 */
import createFetchClient, { type Middleware } from 'openapi-fetch';
import { apiErrorOf, ContentClientError, NetworkError, SessionExpiredError } from './errors.js';
import type { components, operations, paths } from './schema.js';
import { memoryStore, type Session, type SessionStore } from './session.js';
import {
  type SubscribeOptions,
  type SubscriptionHandlers,
  subscribeWith,
  type Topic,
  type TopicDocuments,
} from './subscribe.js';
import { type UnfinishedUpload, type UploadOptions, type UploadTask, uploader } from './upload.js';

type Schemas = components['schemas'];
export type Post = Schemas['Post'];
export type PostPage = Schemas['PostPage'];
export type NewPost = Schemas['CreatePost'];
/** The contract's PUT: title, body, status. It ignores tags, so this type takes none (see PostPatch). */
export type PostChanges = Schemas['UpdatePost'] & { tags?: never };
/** Any of title, body, status and tags, applied together in one write (PATCH). */
export type PostPatch = Schemas['PatchPost'];
export type Note = Schemas['Note'];
export type NewNote = Schemas['CreateNote'];
export type NoteChanges = Schemas['UpdateNote'];
export type DownloadLink = Schemas['DownloadLink'];
export type SessionInfo = Schemas['Session'];
export type Account = Schemas['Me'];
/** What the public list takes: a page, a tag, an author's id, an order. */
type ListPostsQuery = NonNullable<operations['listPosts']['parameters']['query']>;
/** The orders of the public list: `newest` (the default), `oldest`, `title` (case-folded, A to Z). */
export type PostSort = NonNullable<ListPostsQuery['sort']>;
export interface ListPostsOptions {
  page?: number;
  limit?: number;
  tag?: string;
  /** Only this account's published posts (a post's `authorId`). */
  author?: string;
  sort?: PostSort;
}

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

/** One page of a keyset-paged list, and the cursor of the next page when there is one. */
export interface Page<T> {
  items: T[];
  next?: string;
}

type Result<T> = { data?: T; error?: unknown; response: Response };

/** Routes that never carry the session's token: they are how one gets, renews or ends a session. */
const PUBLIC_AUTH = /^\/api\/auth\/(?:register|login|password-reset|refresh|logout)/;
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

type SessionTokens = Schemas['SessionTokens'] | Schemas['CookieSessionTokens'];

/**
 * A 401 that says the password given was wrong (changing it, deleting the account) rather than
 * that the token is: the session goes on.
 */
async function wrongPassword(response: Response): Promise<boolean> {
  const body = (await response
    .clone()
    .json()
    .catch(() => undefined)) as { error?: unknown } | undefined;
  return body?.error === 'Invalid credentials';
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

  const signIn = async (
    path: '/api/auth/register' | '/api/auth/login',
    body: { email: string; password: string; displayName?: string },
  ) => keep(body.email, await run(() => raw.POST(path, { body, headers: modeHeaders })));

  const client = {
    /** The openapi-fetch client itself, typed, with the session and errors middleware. */
    raw,
    /** The signed-in person, if any. */
    session: (): Session | undefined => store.load(),
    /** A new account (with the name others see on its posts, if given), signed in. */
    register: (email: string, password: string, profile: { displayName?: string } = {}) =>
      signIn('/api/auth/register', { email, password, ...profile }),
    login: (email: string, password: string) => signIn('/api/auth/login', { email, password }),
    /**
     * In cookie mode, the session this browser already has (after a reload, or in a new tab): a
     * fresh access token from the cookie, and the account's address. Undefined when there is
     * none. Outside cookie mode, the store's session as it is.
     */
    resume: async (): Promise<Session | undefined> => {
      const current = store.load();
      if (current || !cookieMode) return current;
      const refreshed = await sendRefresh(undefined).catch((err: unknown) => {
        throw new NetworkError('The API could not be reached', 'api', { cause: err });
      });
      if (refreshed.status === 401) return undefined;
      const pair = (await refreshed.json().catch(() => undefined)) as SessionTokens | undefined;
      if (!refreshed.ok || !pair) throw apiErrorOf(refreshed, pair, false);
      const me = await doFetch(
        new Request(authUrl('/api/auth/me'), { headers: { Authorization: `Bearer ${pair.token}` } }),
      );
      const account = (await me.json().catch(() => undefined)) as Account | undefined;
      if (!me.ok || !account) throw apiErrorOf(me, account, false);
      return keep(account.email, pair);
    },
    /**
     * Ends the session on the server and forgets it here: its refresh token (or cookie) stops
     * working, and so does its access token, on every replica within about a second.
     */
    logout: async () => {
      const current = store.load();
      store.clear();
      if (!current || !renewable(current)) return;
      await run(() =>
        raw.POST('/api/auth/logout', {
          ...(cookieMode ? {} : { body: { refreshToken: current.refreshToken } }),
          headers: { ...modeHeaders, Authorization: `Bearer ${current.token}` },
        }),
      );
    },

    sessions: {
      /**
       * The signed-in person's live sessions, newest first; its own is `current` (in cookie mode,
       * identity knows it from the cookie without a lookup).
       */
      list: () => run(() => raw.GET('/api/auth/sessions', { headers: modeHeaders })),
      /** Ends one of them (another device, say). */
      end: (id: string) =>
        run(() => raw.DELETE('/api/auth/sessions/{id}', { params: { path: { id } } })).then(() => undefined),
      /** Logs out everywhere, this client included. */
      endAll: async () => {
        await run(() => raw.DELETE('/api/auth/sessions'));
        store.clear();
      },
    },

    account: {
      /** The signed-in person's account. */
      me: () => run(() => raw.GET('/api/auth/me')),
      /** Sets the name others see on the person's posts; null removes it. */
      setDisplayName: (displayName: string | null) => run(() => raw.PATCH('/api/auth/me', { body: { displayName } })),
      /** Sets a new password: every other session ends, and this one goes on with the new pair. */
      changePassword: async (currentPassword: string, newPassword: string) => {
        const pair = await run(() =>
          raw.PUT('/api/auth/password', { body: { currentPassword, newPassword }, headers: modeHeaders }),
        );
        keep(store.load()?.email ?? '', pair);
      },
      /** Deletes the account and everything it owns, then ends the session. */
      remove: async (password: string) => {
        await run(() => raw.DELETE('/api/auth/account', { body: { password } }));
        store.clear();
      },
      /** E-mails a link to set a new password (the same answer whether or not the address has an account). */
      requestPasswordReset: (email: string) =>
        run(() => raw.POST('/api/auth/password-reset', { body: { email } })).then(() => undefined),
      /** Sets the password with the token from the e-mail's link; then log in with it. */
      confirmPasswordReset: (token: string, newPassword: string) =>
        run(() => raw.POST('/api/auth/password-reset/confirm', { body: { token, newPassword } })).then(() => undefined),
    },

    users: {
      /** The display names of the accounts `ids` (up to 50 a call), by id; unknown ids are left out. */
      names: async (ids: readonly string[]): Promise<Map<string, string | null>> => {
        const distinct = [...new Set(ids)];
        const names = new Map<string, string | null>();
        for (let from = 0; from < distinct.length; from += 50) {
          const found = await run(() =>
            raw.GET('/api/users', { params: { query: { ids: distinct.slice(from, from + 50).join(',') } } }),
          );
          for (const user of found) names.set(user._id, user.displayName);
        }
        return names;
      },
    },

    posts: {
      /** Published posts, a page at a time: of a tag, of an author, or both, newest first unless `sort` says otherwise. */
      list: (query: ListPostsOptions = {}) =>
        run(() =>
          raw.GET('/api/posts', {
            params: {
              query: {
                ...(query.page ? { page: String(query.page) } : {}),
                ...(query.limit ? { limit: String(query.limit) } : {}),
                ...(query.tag ? { tag: query.tag } : {}),
                ...(query.author ? { author: query.author } : {}),
                ...(query.sort ? { sort: query.sort } : {}),
              } satisfies ListPostsQuery,
            },
          }),
        ),
      get: (id: string) => run(() => raw.GET('/api/posts/{id}', { params: { path: { id } } })),
      /** The caller's posts, a page (of up to 100) at a time. */
      mine: (cursor?: string) =>
        page(() => raw.GET('/api/posts/my-posts', { params: { query: cursor ? { cursor } : {} } })),
      create: (post: NewPost) => run(() => raw.POST('/api/posts', { body: post })),
      /** Changes the title, body or status (the contract's PUT, which ignores tags: see `patch`). */
      update: (id: string, changes: PostChanges) =>
        run(() => raw.PUT('/api/posts/{id}', { params: { path: { id } }, body: changes })),
      /**
       * Changes any of the title, body, status and tags in one request: all of them are applied,
       * or none when one breaks a rule (an ApiError 400).
       */
      patch: (id: string, changes: PostPatch) =>
        run(() => raw.PATCH('/api/posts/{id}', { params: { path: { id } }, body: changes })),
      remove: (id: string) => run(() => raw.DELETE('/api/posts/{id}', { params: { path: { id } } })),
      /** Replaces the post's tags, all at once (`update` cannot change them; `patch` can, with the rest). */
      setTags: (id: string, tags: string[]) =>
        run(() => raw.PUT('/api/posts/{id}/tags', { params: { path: { id } }, body: { tags } })),
    },

    notes: {
      /** The caller's notes, newest first, a page at a time. */
      list: (query: { limit?: number; cursor?: string } = {}) =>
        page(() =>
          raw.GET('/api/notes', {
            params: {
              query: {
                ...(query.limit ? { limit: String(query.limit) } : {}),
                ...(query.cursor ? { cursor: query.cursor } : {}),
              },
            },
          }),
        ),
      get: (id: string) => run(() => raw.GET('/api/notes/{id}', { params: { path: { id } } })),
      create: (note: NewNote) => run(() => raw.POST('/api/notes', { body: note })),
      update: (id: string, changes: NoteChanges) =>
        run(() => raw.PUT('/api/notes/{id}', { params: { path: { id } }, body: changes })),
      remove: (id: string) => run(() => raw.DELETE('/api/notes/{id}', { params: { path: { id } } })),
      /** Attaches an uploaded file's key to a note (the file it replaces is deleted). */
      attach: (id: string, key: string) =>
        run(() => raw.PUT('/api/notes/{id}', { params: { path: { id } }, body: { attachmentKey: key } })),
      /** A signed download link for the note's file (valid for an hour). */
      downloadLink: (id: string) => run(() => raw.GET('/notes/{id}/attachment', { params: { path: { id } } })),
    },
  };

  const files = uploader({
    link: (body) => run(() => raw.POST('/upload-url', { body })),
    createMultipart: (body) => run(() => raw.POST('/api/multipart-uploads', { body })),
    status: (uploadId) => run(() => raw.GET('/api/multipart-uploads/{uploadId}', { params: { path: { uploadId } } })),
    signParts: (uploadId, partNumbers) =>
      run(() =>
        raw.POST('/api/multipart-uploads/{uploadId}/part-urls', {
          params: { path: { uploadId } },
          body: { partNumbers },
        }),
      ),
    complete: (uploadId) =>
      run(() => raw.POST('/api/multipart-uploads/{uploadId}/complete', { params: { path: { uploadId } } })),
    abort: (uploadId) => run(() => raw.DELETE('/api/multipart-uploads/{uploadId}', { params: { path: { uploadId } } })),
    who: () => store.load()?.email ?? '',
  });

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
    ...client,
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
    /** What an upload may be: the allowed media types and the size limits (public). */
    uploadRules: () => run(() => raw.GET('/api/upload-rules')),
    /**
     * Sends a file straight to storage and gives its key: one signed PUT, or parts (4 at a time,
     * retried, resumable) above `multipartFrom` bytes. `onProgress` counts bytes; `signal` aborts.
     */
    upload: (file: Blob, uploadOptions: UploadOptions = {}): Promise<string> => files.start(file, uploadOptions).done,
    /** The same, with pause and resume. */
    startUpload: (file: Blob, uploadOptions: UploadOptions = {}): UploadTask => files.start(file, uploadOptions),
    /** Large uploads the signed-in person began in this browser and did not finish: choosing the same file resumes one. */
    unfinishedUploads: (): UnfinishedUpload[] => files.unfinished(),
    /** Gives up an unfinished upload: storage drops its parts. */
    discardUpload: (uploadId: string): Promise<void> => files.discard(uploadId),
  };
}

export type ContentClient = ReturnType<typeof createContentClient>;

/**
 * Public reads sent with the ETag of the body kept from last time; a 304 is answered with that
 * body. Only answers the API lets caches keep (not `no-store`, which it sends to token holders).
 */
function etagCache(): Middleware {
  const kept = new Map<string, { etag: string; body: string; type: string }>();
  return {
    onRequest({ request }) {
      const entry = request.method === 'GET' ? kept.get(request.url) : undefined;
      if (entry) request.headers.set('If-None-Match', entry.etag);
      return request;
    },
    async onResponse({ request, response }) {
      if (request.method !== 'GET') return response;
      const entry = kept.get(request.url);
      if (response.status === 304 && entry) {
        return new Response(entry.body, { status: 200, headers: { 'content-type': entry.type, etag: entry.etag } });
      }
      const etag = response.headers.get('etag');
      if (response.ok && etag && !/no-store/.test(response.headers.get('cache-control') ?? '')) {
        const body = await response.clone().text();
        kept.set(request.url, { etag, body, type: response.headers.get('content-type') ?? 'application/json' });
      }
      return response;
    },
  };
}
