/**
 * Stream tickets, for `EventSource`, which cannot send an Authorization header: a client trades
 * its access token for a ticket (`POST /api/realtime/ticket`) and opens the stream with
 * `?ticket=`. An access token never goes into a URL, where logs and histories keep it.
 *
 * A ticket is 256 random bits. Redis keeps it under its SHA-256 (a copy of Redis gives nothing to
 * present) with the access token it stands for, so that any replica can redeem it. It must open
 * its stream within TICKET_TTL_S; from then on it serves that stream's reconnects (a dropped
 * connection, a deploy: `EventSource` reconnects by itself with the same URL) until its access
 * token expires, so never longer than an access token lives. Every use checks that token as if it
 * had been sent: its expiry, and its revocation, which the end of its session brings within the
 * revocation bound (5 s). A ticket opens one stream at a time in a process (routes.ts).
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';

export const TICKET_TTL_S = 30;

const keyOf = (ticket: string) => `realtime:ticket:${createHash('sha256').update(ticket).digest('base64url')}`;
/** base64url of 32 bytes. */
const TICKET = /^[\w-]{43}$/;

export interface Tickets {
  /** A ticket for `accessToken`. */
  issue(accessToken: string): Promise<{ ticket: string; expiresIn: number }>;
  /** The access token a ticket stands for; undefined when expired or unknown. */
  redeem(ticket: string): Promise<string | undefined>;
  /** The ticket has opened its stream: it serves that stream's reconnects until `untilMs`. */
  keep(ticket: string, untilMs: number): Promise<void>;
}

export function createTickets(redis: Redis): Tickets {
  return {
    async issue(accessToken) {
      const ticket = randomBytes(32).toString('base64url');
      await redis.set(keyOf(ticket), accessToken, 'EX', TICKET_TTL_S);
      return { ticket, expiresIn: TICKET_TTL_S };
    },

    async redeem(ticket) {
      if (!TICKET.test(ticket)) return undefined;
      return (await redis.get(keyOf(ticket))) ?? undefined;
    },

    async keep(ticket, untilMs) {
      await redis.pexpireat(keyOf(ticket), untilMs);
    },
  };
}
