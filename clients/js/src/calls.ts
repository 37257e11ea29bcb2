/**
 * What each resource's calls are made with (see client.ts): the typed openapi-fetch client, and
 * the two ways a call becomes its answer, the data or the typed error of its failure.
 */
import type { Client } from 'openapi-fetch';
import type { components, paths } from './schema.js';
import type { Session } from './session.js';

/** The openapi-fetch client, typed by the API's paths. */
export type Raw = Client<paths>;

/** The fetch the client sends with. */
export type Fetch = (request: Request) => Promise<Response>;

/** The items of a list that `GET path` answers. */
export type Listed<P extends keyof paths> = paths[P] extends {
  get: { responses: { 200: { content: { 'application/json': (infer T)[] } } } };
}
  ? T
  : never;

export type Result<T> = { data?: T; error?: unknown; response: Response };

/** One page of a keyset-paged list, and the cursor of the next page when there is one. */
export interface Page<T> {
  items: T[];
  next?: string;
}

export interface Calls {
  raw: Raw;
  /** The call's answer, or the typed error for its failure. */
  run<T>(call: () => Promise<Result<T>>): Promise<T>;
  /** The same for a keyset-paged list, with the cursor of its next page. */
  page<T>(call: () => Promise<Result<T[]>>): Promise<Page<T>>;
}

type Schemas = components['schemas'];
export type SessionTokens = Schemas['SessionTokens'] | Schemas['CookieSessionTokens'];

/** What the routes of sessions need of the session's keeping (client.ts). */
export interface SessionKeeping {
  /** Keeps a new pair as the session of `email`, and gives it. */
  keep(email: string, pair: SessionTokens): Session;
  /** What asks the API for cookie mode, on every route of sessions. */
  modeHeaders: Record<string, string>;
  /** Whether the session can get its next access token: a refresh token here, or the cookie. */
  renewable(session: Session): boolean;
  /** POST /api/auth/refresh: with the session's refresh token, or in cookie mode with none. */
  sendRefresh(refreshToken: string | undefined, request?: Request): Promise<Response>;
  /** An auth route's address: against baseUrl, or the request's own origin (a page's, when relative). */
  authUrl(path: string, request?: Request): string;
}
