/**
 * Live changes (`GET /api/realtime`), read over fetch streaming so that the session's token goes
 * in a header, never in a URL. One subscription is one stream, kept open for as long as it is
 * wanted:
 * - every event is handed to the handler of its topic and kind, in the order the server sent it;
 * - a stream that ends or breaks is opened again with `Last-Event-ID`, so nothing is missed and
 *   nothing comes twice; network failures and 5xx wait a growing, jittered delay (0.5 s to 30 s);
 * - `auth.expired` (the token ran out) gets a fresh token from the session, then resumes at once;
 *   a session that cannot be renewed ends the subscription (`status('ended')`);
 * - `reset` (the server no longer holds what was missed) asks the application to reload its lists.
 * The topics, which of them need the session, and the stream's own events are the contract's
 * (topics.ts, generated from libs/contract).
 */
import { apiErrorOf, type ContentClientError, SessionExpiredError } from './errors.js';
import { PROTECTED_TOPICS, STREAM_EVENTS, type Topic, type TopicDocumentNames } from './topics.js';

export type { Topic };
/** The documents each topic carries, as a GET on them answers. */
export type TopicDocuments<Post, Note> = { [T in Topic]: { Post: Post; Note: Note }[TopicDocumentNames[T]] };
const PROTECTED: ReadonlySet<Topic> = new Set(PROTECTED_TOPICS);

export interface TopicHandlers<D> {
  /** A document was created or changed (or, on `posts`, published). */
  upsert?: (document: D) => void;
  /** A document was deleted (or, on `posts`, unpublished or deleted). */
  remove?: (id: string) => void;
}

export type SubscriptionStatus = 'connecting' | 'live' | 'reconnecting' | 'ended';

export type SubscriptionHandlers<T extends Topic, Docs extends Record<Topic, unknown>> = {
  [K in T]?: TopicHandlers<Docs[K]>;
} & {
  /** What was missed is gone from the server: reload the lists, then events go on from here. */
  reset?: () => void;
  /** Where the subscription stands: for a "live" or "reconnecting" indicator. */
  status?: (status: SubscriptionStatus) => void;
  /** Why it ended: a session that could not be renewed, or a request the API refused (400). */
  error?: (error: ContentClientError) => void;
  /** After each event, its id: what `lastEventId` resumes from (after a page load, say). */
  seen?: (lastEventId: string) => void;
};

export interface SubscribeOptions {
  /** On `posts`, only posts with this tag. */
  tag?: string;
  /** Resume after this event id (one a handler saw earlier, kept across a page load, say). */
  lastEventId?: string;
}

/** What a subscription needs of the client it belongs to. */
export interface StreamDeps {
  fetch: (request: Request) => Promise<Response>;
  /** The stream's address for a path (against the client's base URL). */
  url: (path: string) => string;
  /** The session's access token, renewed first when it is (about to be) `expired`; undefined: none. */
  token: (expired?: string) => Promise<string | undefined>;
  onSessionExpired?: (error: SessionExpiredError) => void;
}

const FIRST_DELAY_MS = 500;
const MAX_DELAY_MS = 30_000;
/** A stream that lived this long was a good one: the next failure starts the delays afresh. */
const HEALTHY_MS = 5_000;

interface ServerEvent {
  id?: string;
  event: string;
  data: string;
}

export function subscribeWith<T extends Topic, Docs extends Record<Topic, unknown>>(
  deps: StreamDeps,
  topics: readonly T[],
  handlers: SubscriptionHandlers<T, Docs>,
  options: SubscribeOptions = {},
): () => void {
  const controller = new AbortController();
  const needsCaller = topics.some((t) => PROTECTED.has(t));
  let lastEventId = options.lastEventId;
  let status: SubscriptionStatus | undefined;
  const say = (next: SubscriptionStatus) => {
    if (next === status) return;
    status = next;
    handlers.status?.(next);
  };
  const end = (error?: ContentClientError) => {
    if (controller.signal.aborted && status === 'ended') return;
    controller.abort();
    say('ended');
    if (error) handlers.error?.(error);
  };

  const deliver = (event: ServerEvent) => {
    if (event.event === STREAM_EVENTS.reset) return handlers.reset?.();
    const dot = event.event.lastIndexOf('.');
    const topic = event.event.slice(0, dot) as T;
    const kind = event.event.slice(dot + 1);
    const on = (handlers as Record<string, TopicHandlers<unknown> | undefined>)[topic];
    if (!on || !topics.includes(topic)) return;
    const data = JSON.parse(event.data) as { _id?: string };
    if (kind === 'upsert') on.upsert?.(data);
    else if (kind === 'remove' && typeof data._id === 'string') on.remove?.(data._id);
  };

  /** One stream, read to its end; what comes next. */
  async function once(token: string | undefined, wentLive: () => void): Promise<'again' | 'renew' | 'fail' | 'stop'> {
    const query = new URLSearchParams({ topics: topics.join(',') });
    if (options.tag !== undefined) query.set('tag', options.tag);
    const headers: Record<string, string> = { accept: 'text/event-stream' };
    if (token) headers.authorization = `Bearer ${token}`;
    if (lastEventId !== undefined) headers['last-event-id'] = lastEventId;
    const response = await deps.fetch(
      new Request(deps.url(`/api/realtime?${query}`), { headers, signal: controller.signal }),
    );
    if (response.status === 401 && token) return 'renew';
    if (!response.ok) {
      const body = await response.json().catch(() => undefined);
      if (response.status >= 500 || response.status === 429) return 'fail';
      end(apiErrorOf(response, body, false));
      return 'stop';
    }
    say('live');
    wentLive();
    for await (const event of serverEvents(response.body as ReadableStream<Uint8Array>)) {
      if (event.event === STREAM_EVENTS.authExpired) return 'renew';
      deliver(event);
      if (event.id !== undefined) {
        lastEventId = event.id;
        handlers.seen?.(event.id);
      }
    }
    return 'again';
  }

  void (async () => {
    say('connecting');
    let failures = 0;
    /** Renewals since the last stream that went live. */
    let renewals = 0;
    let expired: string | undefined;
    while (!controller.signal.aborted) {
      const openedAt = Date.now();
      let next: Awaited<ReturnType<typeof once>>;
      let token: string | undefined;
      try {
        token = needsCaller ? await deps.token(expired) : undefined;
        expired = undefined;
        // Unsubscribed while the token was being renewed: an ended subscription says nothing more.
        if (controller.signal.aborted) return;
        if (needsCaller && !token) {
          const error = new SessionExpiredError('Your session has ended');
          deps.onSessionExpired?.(error);
          end(error);
          return;
        }
        next = await once(token, () => {
          renewals = 0;
        });
      } catch {
        // The API or the refresh could not be reached, or the stream broke: try again later.
        next = 'fail';
      }
      if (next === 'stop' || controller.signal.aborted) return;
      if (next === 'renew') {
        // Once is the token running out; a fresh one refused at once is a session that is over.
        renewals += 1;
        if (renewals > 1) {
          const error = new SessionExpiredError('Your session has ended');
          deps.onSessionExpired?.(error);
          return end(error);
        }
        expired = token;
        continue;
      }
      if (Date.now() - openedAt >= HEALTHY_MS) failures = 0;
      say('reconnecting');
      if (next === 'fail' || Date.now() - openedAt < HEALTHY_MS) failures += 1;
      await pause(backoff(failures), controller.signal);
    }
  })();

  return () => end();
}

/** The delay before the `failures`-th retry: doubling from 0.5 s to 30 s, with jitter. */
function backoff(failures: number): number {
  if (failures === 0) return 0;
  const ceiling = Math.min(MAX_DELAY_MS, FIRST_DELAY_MS * 2 ** (failures - 1));
  return ceiling / 2 + Math.random() * (ceiling / 2);
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (ms <= 0 || signal.aborted) return resolve();
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}

/** The events of a `text/event-stream` body (the WHATWG format: fields, blank-line ends). */
async function* serverEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<ServerEvent> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  let event: Partial<ServerEvent> & { data?: string } = {};
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      buffered += decoder.decode(value, { stream: true });
      let newline = buffered.search(/\r\n|\r|\n/);
      while (newline !== -1) {
        const line = buffered.slice(0, newline);
        const width = buffered.startsWith('\r\n', newline) ? 2 : 1;
        // A lone \r at the end of a chunk may be the first half of \r\n: wait for the next one.
        if (buffered[newline] === '\r' && width === 1 && newline === buffered.length - 1) break;
        buffered = buffered.slice(newline + width);
        if (line === '') {
          if (event.event !== undefined || event.data !== undefined) {
            yield { id: event.id, event: event.event ?? 'message', data: event.data ?? '' };
          }
          event = {};
        } else if (!line.startsWith(':')) {
          const colon = line.indexOf(':');
          const field = colon === -1 ? line : line.slice(0, colon);
          const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
          if (field === 'id') event.id = value;
          else if (field === 'event') event.event = value;
          else if (field === 'data') event.data = event.data === undefined ? value : `${event.data}\n${value}`;
        }
        newline = buffered.search(/\r\n|\r|\n/);
      }
    }
  } finally {
    reader.releaseLock();
  }
}
