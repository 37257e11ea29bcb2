/**
 * The gateway's API as typed calls. Every failure becomes an ApiError whose message is meant for
 * a person; raw JSON never reaches the page.
 */
import { currentSession, endSession } from './session';

export interface Post {
  _id: string;
  title: string;
  body: string;
  authorId: string;
  status: 'draft' | 'published';
  tags: string[];
  publishedAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface PostPage {
  posts: Post[];
  total: number;
  page: number;
  pages: number;
}

export interface Note {
  _id: string;
  title: string;
  body: string;
  attachmentKey: string | null;
  authorId: string;
  createdAt: string;
  updatedAt: string;
}

export interface UploadLink {
  url: string;
  key: string;
  headers: Record<string, string>;
  expiresIn: number;
}

/** A file going up in parts; `parts` (on a status read) are the ones storage already holds. */
export interface MultipartUpload {
  uploadId: string;
  key: string;
  size: number;
  partSize: number;
  partCount: number;
  completed: boolean;
  parts?: { partNumber: number; size: number }[];
}

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

function sentence(text: string): string {
  const trimmed = text.trim();
  if (!trimmed) return trimmed;
  const capital = trimmed[0]?.toUpperCase() + trimmed.slice(1);
  return /[.!?]$/.test(capital) ? capital : `${capital}.`;
}

/** What to tell a person about a failed response, from its status and the API's own message. */
export function plainWords(status: number, body: unknown, retryAfter: string | null): ApiError {
  const errors = (body as { errors?: unknown })?.errors;
  if (Array.isArray(errors)) {
    const fields = errors.filter(
      (e): e is FieldError => typeof e?.field === 'string' && typeof e?.message === 'string',
    );
    return new ApiError('Please correct the highlighted fields.', status, fields);
  }
  const message = (body as { error?: unknown })?.error;
  if (status === 429) {
    const seconds = Number(retryAfter);
    const wait = Number.isFinite(seconds) && seconds > 0 ? `${Math.ceil(seconds)} seconds` : 'a minute';
    return new ApiError(`Too many attempts. Please wait ${wait} and try again.`, status);
  }
  if (status === 413) return new ApiError('That is too large to send.', status);
  if (status === 502 || status === 503 || status === 504) {
    return new ApiError('The service is briefly unavailable. Please try again in a moment.', status);
  }
  if (status >= 500) return new ApiError('Something went wrong on our side. Please try again.', status);
  if (typeof message === 'string' && message) return new ApiError(sentence(message), status);
  return new ApiError(`The request was refused (HTTP ${status}).`, status);
}

/** One page of a list, and the path of the next one (from the Link header) when there is one. */
export interface Page<T> {
  items: T[];
  next?: string;
}

async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  return (await send<T>(method, path, body)).body;
}

async function page<T>(path: string): Promise<Page<T>> {
  const { body, headers } = await send<T[]>('GET', path);
  const next = /<([^>]+)>;\s*rel="next"/.exec(headers.get('link') ?? '')?.[1];
  return next ? { items: body, next } : { items: body };
}

async function send<T>(method: string, path: string, body?: unknown): Promise<{ body: T; headers: Headers }> {
  const session = currentSession();
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (session) headers.Authorization = `Bearer ${session.token}`;
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError('We could not reach the service. Check your connection and try again.', 0);
  }
  if (response.status === 204) return { body: undefined as T, headers: response.headers };
  const parsed: unknown = await response.json().catch(() => undefined);
  if (response.ok) return { body: parsed as T, headers: response.headers };
  if (response.status === 401 && session) {
    endSession();
    sessionExpired(SESSION_ENDED);
    throw new ApiError(SESSION_ENDED, 401);
  }
  throw plainWords(response.status, parsed, response.headers.get('retry-after'));
}

const id = (value: string) => encodeURIComponent(value);

export const api = {
  register: (email: string, password: string) =>
    call<{ token: string }>('POST', '/api/auth/register', { email, password }),
  login: (email: string, password: string) => call<{ token: string }>('POST', '/api/auth/login', { email, password }),

  listPosts: (query: { page?: number; tag?: string }) => {
    const params = new URLSearchParams({ page: String(query.page ?? 1), limit: '10' });
    if (query.tag) params.set('tag', query.tag);
    return call<PostPage>('GET', `/api/posts?${params}`);
  },
  getPost: (postId: string) => call<Post>('GET', `/api/posts/${id(postId)}`),
  /** Every post of the caller: the server pages them by 100, and this follows the pages. */
  myPosts: async () => {
    const posts: Post[] = [];
    const seen = new Set<string>();
    for (let path: string | undefined = '/api/posts/my-posts'; path && !seen.has(path); ) {
      seen.add(path);
      const current: Page<Post> = await page<Post>(path);
      posts.push(...current.items);
      path = current.next;
    }
    return posts;
  },
  createPost: (post: { title: string; body: string; tags: string[] }) => call<Post>('POST', '/api/posts', post),
  updatePost: (postId: string, changes: Partial<Pick<Post, 'title' | 'body' | 'status'>>) =>
    call<Post>('PUT', `/api/posts/${id(postId)}`, changes),
  deletePost: (postId: string) => call<void>('DELETE', `/api/posts/${id(postId)}`),

  /** The newest notes, or the page at `next` (from the page before). */
  listNotes: (next = '/api/notes') => page<Note>(next),
  createNote: (note: { title: string; body: string; attachmentKey?: string }) => call<Note>('POST', '/api/notes', note),
  updateNote: (noteId: string, changes: { title?: string; body?: string; attachmentKey?: string | null }) =>
    call<Note>('PUT', `/api/notes/${id(noteId)}`, changes),
  deleteNote: (noteId: string) => call<void>('DELETE', `/api/notes/${id(noteId)}`),
  attachmentLink: (noteId: string) =>
    call<{ url: string; expiresIn: number }>('GET', `/api/notes/${id(noteId)}/attachment`),
  uploadLink: (file: { contentType: string; filename: string; size: number }) =>
    call<UploadLink>('POST', '/api/upload-url', file),
  createMultipart: (file: { contentType: string; filename: string; size: number }) =>
    call<MultipartUpload>('POST', '/api/multipart-uploads', file),
  multipartStatus: (uploadId: string) => call<MultipartUpload>('GET', `/api/multipart-uploads/${id(uploadId)}`),
  signParts: (uploadId: string, partNumbers: number[]) =>
    call<{ parts: { partNumber: number; url: string }[]; expiresIn: number }>(
      'POST',
      `/api/multipart-uploads/${id(uploadId)}/part-urls`,
      { partNumbers },
    ),
  completeMultipart: (uploadId: string) =>
    call<{ key: string; size: number }>('POST', `/api/multipart-uploads/${id(uploadId)}/complete`),
  abortMultipart: (uploadId: string) => call<void>('DELETE', `/api/multipart-uploads/${id(uploadId)}`),
};
