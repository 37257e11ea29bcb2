/**
 * The vocabulary of live updates (`GET /api/realtime`, Server-Sent Events), written once: the
 * topics a stream may ask for, which of them are the caller's own, the events of each and what
 * their data is, and the events of a stream itself. Posts and notes publish these events on the
 * bus, the realtime service reads a stream's query and lets events through by them, the OpenAPI
 * document lists the topics from them, and the client library's generated vocabulary
 * (clients/js/src/topics.ts) is made of them.
 *
 * On the wire an event is `event: <topic>.<kind>` with its JSON as `data:`: for an upsert the
 * document as GET answers it, for a removal `{"_id"}`.
 */

/** The topics anyone may follow. */
export const PUBLIC_TOPICS = ['posts'] as const;
/**
 * The topics of the caller's own documents: a stream of any of them needs a caller (a token, or a
 * ticket), and gets only the caller's events (each carries its `owner`).
 */
export const PROTECTED_TOPICS = ['my-posts', 'notes'] as const;
/** Every topic, the public ones first. */
export const TOPICS = [...PUBLIC_TOPICS, ...PROTECTED_TOPICS] as const;
export type Topic = (typeof TOPICS)[number];
export type ProtectedTopic = (typeof PROTECTED_TOPICS)[number];

export const isTopic = (name: string): name is Topic => (TOPICS as readonly string[]).includes(name);
export const isProtectedTopic = (topic: Topic): topic is ProtectedTopic =>
  (PROTECTED_TOPICS as readonly string[]).includes(topic);

/** What each topic carries, in words: the OpenAPI document's description of `topics` lists them. */
export const TOPIC_DESCRIPTIONS: Readonly<Record<Topic, string>> = {
  posts: 'published posts; public',
  'my-posts': 'the caller’s posts, drafts included',
  notes: 'the caller’s notes',
};

/** The document each topic's upserts carry (as GET answers it), by its schema's name in the OpenAPI document. */
export const TOPIC_DOCUMENTS = {
  posts: 'Post',
  'my-posts': 'Post',
  notes: 'Note',
} as const satisfies Readonly<Record<Topic, 'Post' | 'Note'>>;
/** The documents of the topics, given how a side types a post and a note. */
export type TopicDocuments<Post, Note> = { [T in Topic]: { Post: Post; Note: Note }[(typeof TOPIC_DOCUMENTS)[T]] };

export const EVENT_KINDS = ['upsert', 'remove'] as const;
export type EventKind = (typeof EVENT_KINDS)[number];

/** A removal's data: the id of the document that is gone (from the topic, or altogether). */
export interface Removed {
  _id: string;
}

/** The name of a topic's event on the wire. */
export const eventName = (topic: Topic, kind: EventKind) => `${topic}.${kind}` as const;

/** The events of a stream itself, of no topic; their data is `{}`. */
export const STREAM_EVENTS = {
  /** What the stream missed is gone from the bus: reload the lists; events go on from here. */
  reset: 'reset',
  /** The token (or the ticket's token) that opened the stream no longer works: the stream ends. */
  authExpired: 'auth.expired',
} as const;

/**
 * Who may get an event, beyond its topic: a protected topic's event names its `owner`. A `posts`
 * event names the post's tags, for the streams that follow one tag; `taggedOnly` marks the removal
 * that only the followers of the tags a post left are told (the others still see it).
 */
interface Recipients {
  posts: { tags: string[]; taggedOnly?: boolean };
  'my-posts': { owner: string };
  notes: { owner: string };
}

/**
 * An event as its publisher puts it on the bus (@cs/event-bus): its topic, its kind, its data and
 * who may get it. `Post` and `Note`: the documents, as each side types them (the realtime service,
 * which passes them on as they are, leaves them `unknown`).
 */
export type LiveEvent<Post = unknown, Note = unknown> = {
  [T in Topic]:
    | ({ topic: T; kind: 'upsert'; data: TopicDocuments<Post, Note>[T] } & Recipients[T])
    | ({ topic: T; kind: 'remove'; data: Removed } & Recipients[T]);
}[Topic];
