/**
 * Stream tickets, for `EventSource`, which cannot send an Authorization header: a client trades
 * its access token for a ticket (`POST /api/realtime/ticket`) and opens the stream with
 * `?ticket=`. An access token never goes into a URL, where logs and histories keep it.
 *
 * A ticket is 256 random bits, valid TICKET_TTL_S, spent by its first use: Redis keeps it under
 * its SHA-256 (a copy of Redis gives nothing to present) with the access token it stands for,
 * and hands it out once (GETDEL), on whichever replica the stream opens. The stream then checks
 * that token as if it had been sent: its expiry and its revocation.
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
  /** The access token a ticket stands for, once; undefined when spent, expired or unknown. */
  redeem(ticket: string): Promise<string | undefined>;
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
      return (await redis.getdel(keyOf(ticket))) ?? undefined;
    },
  };
}
