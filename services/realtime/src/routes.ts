/**
 * `GET /api/realtime?topics=…[&tag=…][&ticket=…]`: a stream of Server-Sent Events (hub.ts), and
 * `POST /api/realtime/ticket`: a ticket to open one with `EventSource` (tickets.ts).
 *
 * Everything a request can get wrong is answered as JSON before the stream starts: an unknown
 * topic or a bad tag 400; a protected topic without a valid token, or a spent ticket, 401.
 *
 * A stream opened with a token lives as long as the token works: every second, each stream's
 * token is verified again, and one that has expired, or been revoked (log out everywhere, a new
 * password, a deletion: the revocation feed's bound, @cs/auth), gets `auth.expired` and ends. The
 * client refreshes and resumes with Last-Event-ID, or learns that its session is over.
 *
 * An account holds at most `streamsPerAccount` streams at once in this process: past it, 429 with
 * Retry-After, before the stream starts. Anonymous streams are bounded by the gateway's cap on
 * connections per client address.
 */
import { bearerToken, type TokenVerifier } from '@cs/auth';
import { HttpError, messages } from '@cs/errors';
import { type AppContext, type AppState, requireAuth } from '@cs/koa';
import Router from '@koa/router';
import { EventStream, type EventStreamOptions } from './event-stream';
import type { Hub } from './hub';
import type { Tickets } from './tickets';
import { needsCaller, subscriptionOf } from './topics';

export const realtimeMessages = {
  badTicket: 'Invalid, expired or spent ticket',
  tooManyStreams: 'Too many open streams for this account: close one, or try again later',
} as const;

/** How often open streams' tokens are checked against the revocation list. */
const REVOCATION_CHECK_MS = 1_000;
/** When an account over its streams may try again: streams last, so not at once. */
const STREAMS_RETRY_AFTER_S = 30;

interface Caller {
  userId: string;
  token: string;
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
  const callerOf = async (ctx: AppContext): Promise<Caller | undefined> => {
    const ticket = ctx.query.ticket;
    let token: string | undefined;
    if (ticket !== undefined) {
      token = typeof ticket === 'string' ? await tickets.redeem(ticket) : undefined;
      if (token === undefined) throw new HttpError(401, realtimeMessages.badTicket);
    } else if (ctx.headers.authorization !== undefined) {
      token = bearerToken(ctx.headers.authorization);
    }
    if (token === undefined) return undefined;
    const userId = await tokens.userIdFromAuthorization(`Bearer ${token}`);
    return { userId, token };
  };

  router.get('/', async (ctx) => {
    const subscription = subscriptionOf(ctx.query.topics, ctx.query.tag);
    const caller = await callerOf(ctx);
    // A protected topic without a caller: the same 401 as any protected route.
    if (!caller && needsCaller(subscription)) throw new HttpError(401, messages.noToken);
    const lastEventId = ctx.get('last-event-id') || undefined;
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
        membership.say('auth.expired', {});
        stream.end();
      };
      guarded.set(stream, { token: caller.token, end: expire });
      stream.onEnd(() => guarded.delete(stream));
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
