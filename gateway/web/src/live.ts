/**
 * Live changes for every tab of this browser, over one stream. A browser opens at most six
 * HTTP/1.1 connections to an origin, so a stream per tab would stall every request of the
 * seventh tab. One tab leads (it holds a Web Lock for as long as it lives) and keeps the stream;
 * it hands each event to the others on a BroadcastChannel. When it closes, another tab takes the
 * lock and resumes after the last event id the others saw, so nothing falls between the two.
 *
 * The stream carries `posts` (public), and `notes` while the leading tab is signed in (a tab
 * that signs in elsewhere in the browser leads once it takes the lock, or after a reload). A tab
 * that signs in or out tells the leader, which opens the stream again.
 */
import type { Note, Post, SubscriptionStatus } from '@content-service/client';
import { api } from './api';
import { currentSession } from './session';

export type LiveEvent =
  | { topic: 'posts'; kind: 'upsert'; post: Post }
  | { topic: 'posts'; kind: 'remove'; id: string }
  | { topic: 'notes'; kind: 'upsert'; note: Note }
  | { topic: 'notes'; kind: 'remove'; id: string }
  | { topic: 'all'; kind: 'reset' };

type Message =
  | { type: 'event'; event: LiveEvent }
  | { type: 'seen'; id: string }
  | { type: 'status'; status: SubscriptionStatus }
  /** A tab signed in or out: the leader opens the stream again. */
  | { type: 'session' }
  /** A new tab asks for the status. */
  | { type: 'hello' };

const LOCK = 'content-service-live';
const channel = typeof BroadcastChannel === 'function' ? new BroadcastChannel(LOCK) : undefined;
const listeners = new Set<(event: LiveEvent) => void>();
const statusListeners = new Set<(status: SubscriptionStatus) => void>();
let status: SubscriptionStatus = 'connecting';
let lastEventId: string | undefined;
let leading = false;
let stop: (() => void) | undefined;

function receive(message: Message): void {
  if (message.type === 'event') for (const listener of listeners) listener(message.event);
  else if (message.type === 'seen') lastEventId = message.id;
  else if (message.type === 'status') {
    status = message.status;
    for (const listener of statusListeners) listener(status);
  }
}

/** From the leader: to this tab, and to the others. */
function publish(message: Message): void {
  receive(message);
  channel?.postMessage(message);
}

/** (Re)opens the stream for this tab's session as it is now; it never resumes one itself. */
function open(): void {
  stop?.();
  const event = (e: LiveEvent) => publish({ type: 'event', event: e });
  stop = api.subscribe(
    currentSession() ? ['posts', 'notes'] : ['posts'],
    {
      posts: {
        upsert: (post) => event({ topic: 'posts', kind: 'upsert', post }),
        remove: (id) => event({ topic: 'posts', kind: 'remove', id }),
      },
      notes: {
        upsert: (note) => event({ topic: 'notes', kind: 'upsert', note }),
        remove: (id) => event({ topic: 'notes', kind: 'remove', id }),
      },
      reset: () => event({ topic: 'all', kind: 'reset' }),
      status: (next) => publish({ type: 'status', status: next }),
      seen: (id) => publish({ type: 'seen', id }),
    },
    lastEventId === undefined ? {} : { lastEventId },
  );
}

function lead(): void {
  leading = true;
  open();
}

/** Starts following: this tab leads, or listens to the one that does. */
export function startLive(): void {
  if (channel) {
    channel.onmessage = ({ data }: MessageEvent<Message>) => {
      if (data.type === 'session') {
        if (leading) open();
      } else if (data.type === 'hello') {
        if (leading) channel.postMessage({ type: 'status', status } satisfies Message);
      } else receive(data);
    };
    channel.postMessage({ type: 'hello' } satisfies Message);
  }
  // Held until the tab closes; without Web Locks (or a channel), each tab keeps its own stream.
  if (channel && navigator.locks) void navigator.locks.request(LOCK, () => new Promise<void>(() => lead()));
  else lead();
}

/** This tab signed in or out: the stream follows (notes come only with a session). */
export function sessionChanged(): void {
  if (leading) open();
  else channel?.postMessage({ type: 'session' } satisfies Message);
}

/** Calls `listener` with every event until the returned function is called. */
export function onLive(listener: (event: LiveEvent) => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** Calls `listener` with the stream's status now and on every change. */
export function onLiveStatus(listener: (status: SubscriptionStatus) => void): () => void {
  statusListeners.add(listener);
  listener(status);
  return () => statusListeners.delete(listener);
}
