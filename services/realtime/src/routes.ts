/**
 * `GET /api/realtime?topics=…[&tag=…][&ticket=…][&lastEventId=…]`: a stream of Server-Sent Events
 * (hub.ts), and `POST /api/realtime/ticket`: a ticket to open one with `EventSource` (tickets.ts).
 *
 * Everything a request can get wrong is answered as JSON before the stream starts: an unknown
 * topic or a bad tag 400; a protected topic without a valid token, or a ticket that is unknown,
 * expired or stands for a token that no longer works, 401.
 *
 * A stream resumes after the event its `Last-Event-ID` header names, or, for a new `EventSource`
 * (which cannot set that header), its `lastEventId` query parameter; the header wins.
 *
 * A stream opened with a token lives as long as the token works: every second, each stream's
 * token is verified again, and one that has expired, or been revoked (log out everywhere, a new
 * password, a deletion: the revocation feed's bound, @cs/auth), gets `auth.expired` and ends. The
 * client refreshes and resumes with Last-Event-ID, or learns that its session is over. A stream
 * opened with a ticket is its ticket's one stream in this process: a reconnect with the ticket
 * ends the stream it left behind, should that one still look open here.
 *
 * An account holds at most `streamsPerAccount` streams at once in this process: past it, 429 with
 * Retry-After, before the stream starts. Anonymous streams are bounded by the gateway's cap on
 * connections per client address.
 */
import { bearerToken, type TokenVerifier } from '@cs/auth';
import { STREAM_EVENTS, subscribeQuerySchema } from '@cs/contract';
import { HttpError, messages } from '@cs/errors';
import { type AppContext, type AppState, requireAuth, validateQuery } from '@cs/koa';
import Router from '@koa/router';
import { EventStream, type EventStreamOptions } from './event-stream';
import type { Hub } from './hub';
import type { Tickets } from './tickets';
import { needsCaller, type SubscribeQuery, subscriptionOf } from './topics';

export const realtimeMessages = {
  badTicket: 'Invalid or expired ticket',
  tooManyStreams: 'Too many open streams for this account: close one, or try again later',
} as const;

/** How often open streams' tokens are checked against the revocation list. */
const REVOCATION_CHECK_MS = 1_000;
/** When an account over its streams may try again: streams last, so not at once. */
const STREAMS_RETRY_AFTER_S = 30;

interface Caller {
  userId: string;
  token: string;
  /** The ticket the stream was opened with, if any. */
  ticket?: string;
}

export function realtimeRoutes({
  hub,
  tickets,
  tokens,
  stream: streamOptions,
  streamsPerAccount,
}: {
  hub: Hub;
  tickets: Tickets;
  tokens: TokenVerifier;
  stream: EventStreamOptions;
  streamsPerAccount: number;
}): { router: Router<AppState>; stop(): void } {
  const router = new Router<AppState>({ prefix: '/api/realtime' });
  /** Open streams with a caller, and what ends them when the caller's token stops working. */
  const guarded = new Map<EventStream, { token: string; end(): void }>();
  /** Open streams per account. */
  const held = new Map<string, number>();

  const sweep = setInterval(() => {
    for (const [, { token, end }] of guarded) {
      tokens.userIdFromAuthorization(`Bearer ${token}`).catch((err: unknown) => {
        if (err instanceof HttpError && err.status === 401) end();
      });
    }
  }, REVOCATION_CHECK_MS);
  sweep.unref();

  /** The caller a request names (Bearer token or ticket), or undefined when it names none. */
  const callerOf = async (ctx: AppContext, ticket: string | undefined): Promise<Caller | undefined> => {
    if (ticket !== undefined) {
      const token = await tickets.redeem(ticket);
      if (token === undefined) throw new HttpError(401, realtimeMessages.badTicket);
      const userId = await tokens.userIdFromAuthorization(`Bearer ${token}`).catch((err: unknown) => {
        throw err instanceof HttpError && err.status === 401 ? new HttpError(401, realtimeMessages.badTicket) : err;
      });
      await tickets.keep(ticket, tokens.signedToken(`Bearer ${token}`).expiresAt * 1000);
      return { userId, token, ticket };
    }
    if (ctx.headers.authorization === undefined) return undefined;
    const token = bearerToken(ctx.headers.authorization);
    return { userId: await tokens.userIdFromAuthorization(`Bearer ${token}`), token };
  };

  /** The one stream each ticket holds open in this process. */
  const ticketed = new Map<string, EventStream>();

  router.get('/', validateQuery(subscribeQuerySchema), async (ctx) => {
    const query = ctx.query as unknown as SubscribeQuery;
    const subscription = subscriptionOf(query);
    const caller = await callerOf(ctx, query.ticket);
    // A protected topic without a caller: the same 401 as any protected route.
    if (!caller && needsCaller(subscription)) throw new HttpError(401, messages.noToken);
    const lastEventId = ctx.get('last-event-id') || query.lastEventId || undefined;
    if (caller && (held.get(caller.userId) ?? 0) >= streamsPerAccount) {
      throw new HttpError(429, realtimeMessages.tooManyStreams, {
        headers: { 'Retry-After': String(STREAMS_RETRY_AFTER_S) },
      });
    }

    ctx.respond = false;
    ctx.req.socket.setNoDelay(true);
    const stream = new EventStream(ctx.res, streamOptions);
    const membership = hub.join({ subscription, userId: caller?.userId, stream }, lastEventId);
    if (caller) {
      const { userId } = caller;
      held.set(userId, (held.get(userId) ?? 0) + 1);
      stream.onEnd(() => {
        const left = (held.get(userId) ?? 1) - 1;
        if (left > 0) held.set(userId, left);
        else held.delete(userId);
      });
      const expire = () => {
        membership.say(STREAM_EVENTS.authExpired, {});
        stream.end();
      };
      guarded.set(stream, { token: caller.token, end: expire });
      stream.onEnd(() => guarded.delete(stream));
    }
    if (caller?.ticket !== undefined) {
      const { ticket } = caller;
      ticketed.get(ticket)?.cut();
      ticketed.set(ticket, stream);
      stream.onEnd(() => {
        if (ticketed.get(ticket) === stream) ticketed.delete(ticket);
      });
    }
    await membership.live;
  });

  router.post('/ticket', requireAuth(tokens), async (ctx) => {
    ctx.status = 201;
    ctx.body = await tickets.issue(bearerToken(ctx.headers.authorization));
  });

  return {
    router,
    stop() {
      clearInterval(sweep);
    },
  };
}
