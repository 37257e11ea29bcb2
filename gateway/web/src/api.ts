/**
 * The gateway's API, through the typed client library (`@content-service/client`). Every failure
 * becomes an ApiError whose message is meant for a person; raw JSON never reaches the page.
 */
import {
  ApiError as ClientApiError,
  createContentClient,
  type Identity,
  NetworkError,
  type Note,
  type Page,
  type Post,
  type PostPage,
  type PostSort,
  type Provider,
  SessionExpiredError,
  type SessionInfo,
  SignInError,
  StorageError,
  UploadAbortedError,
  type UploadOptions,
  type UploadTask,
} from '@content-service/client';
import { sessionStore } from './session';
import { signInFailure } from './sign-in-failures';

export type { Identity, Note, Page, Post, PostPage, PostSort, SessionInfo };

export interface FieldError {
  field: string;
  message: string;
}

export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly fieldErrors: FieldError[] = [],
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** Called when a token we sent is refused: the session is over, the person must log in again. */
let sessionExpired: (message: string) => void = () => {};
export function onSessionExpired(handler: (message: string) => void): void {
  sessionExpired = handler;
}

export const SESSION_ENDED = 'Your session has ended. Please log in again.';
export const CANCELLED = 'The upload was cancelled.';

function sentence(text: string): string {
  const trimmed = text.trim();
  if (!trimmed) return trimmed;
  const capital = trimmed[0]?.toUpperCase() + trimmed.slice(1);
  return /[.!?]$/.test(capital) ? capital : `${capital}.`;
}

/** What to tell a person about a failure the client library reported. */
export function plainWords(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof SessionExpiredError) return new ApiError(SESSION_ENDED, 401);
  if (error instanceof UploadAbortedError) return new ApiError(CANCELLED, 0);
  if (error instanceof SignInError) return new ApiError(signInFailure(error.reason), 0);
  if (error instanceof NetworkError) {
    return new ApiError(
      error.target === 'storage'
        ? 'The file could not be sent to storage. Storage did not accept an upload from this page, or could not be reached.'
        : 'We could not reach the service. Check your connection and try again.',
      0,
    );
  }
  if (error instanceof StorageError) {
    return new ApiError(`Storage refused the file (HTTP ${error.status}). Please try again.`, error.status);
  }
  if (!(error instanceof ClientApiError)) return new ApiError('Something went wrong on our side. Please try again.', 0);
  const { status } = error;
  if (error.errors.length > 0) return new ApiError('Please correct the highlighted fields.', status, error.errors);
  if (status === 429) {
    const seconds = error.retryAfter;
    const wait = seconds !== undefined && seconds > 0 ? `${Math.ceil(seconds)} seconds` : 'a minute';
    return new ApiError(`Too many attempts. Please wait ${wait} and try again.`, status);
  }
  if (status === 413) return new ApiError('That is too large to send.', status);
  if (status === 502 || status === 503 || status === 504) {
    return new ApiError('The service is briefly unavailable. Please try again in a moment.', status);
  }
  if (status >= 500) return new ApiError('Something went wrong on our side. Please try again.', status);
  // The library says `HTTP <status>` when the answer carried no message of the API's.
  if (!/^HTTP \d{3}$/.test(error.message)) return new ApiError(sentence(error.message), status);
  return new ApiError(`The request was refused (HTTP ${status}).`, status);
}

const client = createContentClient({
  baseUrl: '',
  store: sessionStore,
  // The refresh token in an HttpOnly cookie, never where this page's script could read it.
  refreshCookie: true,
  onSessionExpired: () => sessionExpired(SESSION_ENDED),
});

let providers: Promise<Provider[]> | undefined;

async function call<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw plainWords(error);
  }
}

export const api = {
  register: (email: string, password: string, displayName?: string) =>
    call(() => client.register(email, password, displayName ? { displayName } : {})),
  me: () => call(() => client.account.me()),
  setDisplayName: (displayName: string | null) => call(() => client.account.setDisplayName(displayName)),
  /** Who wrote these posts: their display names by author id, in one request. */
  authorNames: (posts: readonly Post[]) => call(() => client.users.names(posts.map((post) => post.authorId))),
  /** One account's display name: null when it has none, undefined when there is no such account. */
  authorName: (authorId: string) => call(() => client.users.names([authorId]).then((names) => names.get(authorId))),
  login: (email: string, password: string) => call(() => client.login(email, password)),
  /** The session this browser already has (a reload, another tab), from its cookie; undefined when none. */
  resume: () => call(() => client.resume()),
  /** Ends the session on the server too: its cookie and its access token stop working. */
  logout: () => call(() => client.logout()),
  listSessions: () => call(() => client.sessions.list()),
  endSession: (id: string) => call(() => client.sessions.end(id)),
  logoutEverywhere: () => call(() => client.sessions.endAll()),
  requestPasswordReset: (email: string) => call(() => client.account.requestPasswordReset(email)),
  confirmPasswordReset: (token: string, newPassword: string) =>
    call(() => client.account.confirmPasswordReset(token, newPassword)),
  requestEmailVerification: () => call(() => client.account.requestEmailVerification()),
  confirmEmailVerification: (token: string) => call(() => client.account.confirmEmailVerification(token)),
  requestEmailChange: (newEmail: string, password: string) =>
    call(() => client.account.requestEmailChange(newEmail, password)),
  confirmEmailChange: (token: string) => call(() => client.account.confirmEmailChange(token)),
  /**
   * The providers to offer a sign-in with, asked once a page load (they change with the server's
   * settings only); none when they cannot be listed, and asked again next time (a password works).
   */
  providers: () =>
    (providers ??= client.providers().catch(() => {
      providers = undefined;
      return [];
    })),
  /** Where to send the browser to sign in with `provider`; it comes back to this page's origin. */
  beginSignIn: (provider: string) => call(() => client.beginSignIn(provider, { redirect: `${location.origin}/` })),
  /** Ends the sign-in the browser came back from (the address's `?flow=` and `#code=` or `#error=`). */
  finishSignIn: () => call(() => client.finishSignIn(location.href)),
  identities: () => call(() => client.account.identities()),
  unlinkIdentity: (id: string) => call(() => client.account.unlinkIdentity(id)),

  /**
   * Ten published posts a page: of a tag, of an author, or both; newest first unless `sort` says
   * otherwise, or best first when `q` searches them.
   */
  listPosts: (query: {
    page?: number;
    tag?: string | undefined;
    author?: string | undefined;
    sort?: PostSort;
    q?: string | undefined;
  }) =>
    call(() =>
      client.posts.list({
        page: query.page ?? 1,
        limit: 10,
        ...(query.tag ? { tag: query.tag } : {}),
        ...(query.author ? { author: query.author } : {}),
        ...(query.sort && query.sort !== 'newest' ? { sort: query.sort } : {}),
        ...(query.q ? { q: query.q } : {}),
      }),
    ),
  getPost: (postId: string) => call(() => client.posts.get(postId)),
  /** Every post of the caller: the server pages them by 100, and this follows the pages. */
  myPosts: () =>
    call(async () => {
      const posts: Post[] = [];
      const seen = new Set<string>();
      let cursor: string | undefined;
      do {
        const page: Page<Post> = await client.posts.mine(cursor);
        posts.push(...page.items);
        cursor = page.next;
        // A cursor seen before would loop for ever: stop there.
        if (cursor && seen.has(cursor)) break;
        if (cursor) seen.add(cursor);
      } while (cursor);
      return posts;
    }),
  createPost: (post: { title: string; body: string; tags: string[] }) => call(() => client.posts.create(post)),
  updatePost: (postId: string, changes: { title?: string; body?: string; status?: 'draft' | 'published' }) =>
    call(() => client.posts.update(postId, changes)),
  /** Any of title, body, status and tags in one request: all saved, or none. */
  patchPost: (
    postId: string,
    changes: { title?: string; body?: string; status?: 'draft' | 'published'; tags?: string[] },
  ) => call(() => client.posts.patch(postId, changes)),
  deletePost: (postId: string) => call(() => client.posts.remove(postId)),

  /** The newest notes, or the page after `cursor` (from the page before); with `q`, those that match, best first. */
  listNotes: (cursor?: string, q?: string) =>
    call(() => client.notes.list({ ...(cursor ? { cursor } : {}), ...(q ? { q } : {}) })),
  createNote: (note: { title: string; body: string; attachmentKey?: string }) => call(() => client.notes.create(note)),
  updateNote: (noteId: string, changes: { title?: string; body?: string; attachmentKey?: string | null }) =>
    call(() => client.notes.update(noteId, changes)),
  deleteNote: (noteId: string) => call(() => client.notes.remove(noteId)),
  /** The note's file, or with `thumb` a thumbnail of its image. */
  attachmentLink: (noteId: string, options: { thumb?: string } = {}) =>
    call(() => client.notes.downloadLink(noteId, options)),
  uploadRules: () => call(() => client.uploadRules()),

  /** Live changes (live.ts shares one stream across the tabs). */
  subscribe: client.subscribe,

  /** Large uploads begun in this browser and not finished; the same file, chosen again, resumes one. */
  unfinishedUploads: () => client.unfinishedUploads(),
  discardUpload: (uploadId: string) => call(() => client.discardUpload(uploadId)),

  /** A file straight to storage (in parts when large); its key when done, in words when not. */
  startUpload(file: File, options: UploadOptions): UploadTask {
    const task = client.startUpload(file, options);
    return Object.assign(task, { done: call(() => task.done) });
  },
};
