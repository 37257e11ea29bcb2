/** Live updates: what their routes take and answer. */
import { TAG_PATTERN } from '../limits';
import { topicMessages } from '../messages';

/**
 * The query of a stream (`GET /api/realtime`): the realtime service validates it with this object,
 * and the OpenAPI document's query parameters are its properties. It says the query's shape: each
 * parameter one string (a parameter given twice is a list, and a 400), topics present, a tag as
 * the posts list takes it. The topics list's own entries (each a topic of the vocabulary, and a tag
 * only with posts) are read by the realtime service, which can name the entry that is wrong.
 */
export const subscribeQuerySchema = {
  type: 'object',
  required: ['topics'],
  properties: {
    topics: { type: 'string', 'x-messages': topicMessages.topicsRequired },
    tag: { type: 'string', pattern: TAG_PATTERN, 'x-messages': topicMessages.badTag },
    ticket: { type: 'string', 'x-messages': topicMessages.ticketNotOne },
    lastEventId: { type: 'string', 'x-messages': topicMessages.lastEventIdNotOne },
  },
  'x-error': { status: 400 },
} as const;

/** A ticket that names its caller on one stream (`?ticket=`) and its reconnects, for EventSource. */
export const realtimeTicketSchema = {
  type: 'object',
  required: ['ticket', 'expiresIn'],
  properties: { ticket: { type: 'string', minLength: 1 }, expiresIn: { type: 'integer', minimum: 1 } },
  additionalProperties: false,
} as const;
