/** The operations of the `realtime` tag: the event stream and its tickets. */
import { PROTECTED_TOPICS, STREAM_EVENTS, TOPIC_DESCRIPTIONS, TOPICS } from '../events';
import { subscribeQuerySchema } from '../schemas/realtime';
import { operation } from './operation';
import { failure, ref } from './responses';

/** `a`, `a and b`, `a, b and c`. */
const inWords = (items: readonly string[]): string =>
  items.length < 2 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;
/** How many topics need a caller, in words (there are two or more). */
const COUNTS = ['no', 'one', 'two', 'three', 'four', 'five'];

/**
 * The topics, as the live-update vocabulary has them (events.ts): each with what it carries, the
 * public ones first, so that those which need a caller are the last.
 */
const TOPICS_DESCRIPTION =
  `Comma-separated: ${inWords(TOPICS.map((topic) => `\`${topic}\` (${TOPIC_DESCRIPTIONS[topic]})`))}. ` +
  `The last ${COUNTS[PROTECTED_TOPICS.length]} need a caller: a Bearer token, or \`ticket\`.`;

type SubscribeQuery = typeof subscribeQuerySchema;

/**
 * A query parameter of the stream, from the schema the realtime service validates the query with:
 * whether it is required and its rule, without the validation step's messages (`x-messages`).
 */
function queryParameter(name: keyof SubscribeQuery['properties'], description: string, example?: string) {
  const { 'x-messages': _messages, ...schema } = subscribeQuerySchema.properties[name];
  return {
    name,
    in: 'query',
    required: (subscribeQuerySchema.required as readonly string[]).includes(name),
    description,
    schema,
    ...(example === undefined ? {} : { example }),
  };
}

export const realtimePaths = {
  '/api/realtime': {
    get: {
      operationId: 'subscribe',
      summary: 'Stream the changes of posts and notes (Server-Sent Events)',
      description: `A stream of Server-Sent Events: the changes of the topics asked for, as they commit. Each event has an \`id:\`, an \`event:\` of the form \`<topic>.upsert\` (data: the document as GET answers it) or \`<topic>.remove\` (data: \`{"_id"}\`), and JSON \`data:\`. A comment line (\`: keepalive\`) comes every 10 s. Reconnect with \`Last-Event-ID\` to get every event after that one, in order, while it is within the retention window (15 minutes or 20,000 events by default); past it the first event is \`${STREAM_EVENTS.reset}\` (data \`{}\`): reload the lists. When the token that opened a stream (or its ticket’s token) expires or is revoked, the stream sends \`${STREAM_EVENTS.authExpired}\` and ends: reconnect with a fresh token (or a fresh ticket) and \`Last-Event-ID\` (or \`lastEventId\`). A client that does not read what it is sent is cut off (its connection closed): reconnect with \`Last-Event-ID\`, and nothing is missed. An account holds at most 20 streams at once (past it 429 with \`Retry-After\`).`,
      tags: ['realtime'],
      security: [{}, { bearerAuth: [] }],
      parameters: [
        queryParameter('topics', TOPICS_DESCRIPTION, TOPICS.join(',')),
        queryParameter('tag', 'Only posts with this tag, on the `posts` topic.'),
        queryParameter(
          'ticket',
          'For `EventSource`, which cannot send headers: a ticket from `POST /api/realtime/ticket`. It must open its stream within 30 s; then it serves that stream’s reconnects (`EventSource` reconnects by itself with the same URL) until the access token it was issued for expires, and is refused within 5 s once that token is revoked or its session ends. An access token never goes into a URL.',
        ),
        queryParameter(
          'lastEventId',
          'As the `Last-Event-ID` header, for a new `EventSource`, which cannot send it (after `auth.expired`, say: a fresh ticket, and the id of the last event received). The header wins when both are given.',
        ),
        {
          name: 'Last-Event-ID',
          in: 'header',
          required: false,
          description: 'The id of the last event received: the stream resumes after it.',
          schema: { type: 'string' },
        },
      ],
      responses: {
        200: {
          description: 'The stream; it never ends on its own but for `auth.expired`.',
          content: { 'text/event-stream': { schema: { type: 'string' } } },
        },
        400: { $ref: '#/components/responses/BadRequest' },
        401: failure(
          'A protected topic without a caller; an invalid or expired token; an unknown or expired ticket, or one whose token no longer works.',
          'Invalid or expired ticket',
        ),
        429: { $ref: '#/components/responses/TooManyRequests' },
        502: { $ref: '#/components/responses/BadGateway' },
        503: { $ref: '#/components/responses/Unavailable' },
        504: { $ref: '#/components/responses/GatewayTimeout' },
      },
    },
  },
  '/api/realtime/ticket': {
    post: operation({
      id: 'createRealtimeTicket',
      summary: 'Get a ticket for one event stream',
      description:
        'A ticket that names the caller on one stream (`GET /api/realtime?ticket=`): it must open the stream within 30 s (`expiresIn`), then serves that stream’s reconnects until the access token it was issued for expires; one stream at a time. For `EventSource`; a fetch-based client sends its Bearer token instead.',
      tag: 'realtime',
      auth: 'required',
      ok: { status: 201, description: 'The ticket.', schema: ref('RealtimeTicket') },
    }),
  },
} as const;
