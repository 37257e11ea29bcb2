/**
 * REQUIRE_VERIFIED_EMAIL: a write to posts, notes or files (POST, PUT, PATCH, DELETE) by an account
 * whose e-mail address is not verified is 403, before the hop. Reads, /api/auth (managing the
 * account, verifying it) and realtime are left alone.
 *
 * Tokens carry the user id only (the contract), so whether the address is verified is asked of
 * identity (`GET /internal/email-verified`, with a token signed on the spot for the caller, as our
 * services call one another). Verification never goes back (an e-mail change confirms its new
 * address by its link), so a verified user is remembered, in a bounded set per process: a
 * verified account's writes cost nothing after its first. An unverified one is asked about again
 * on each write, so that its first write after verifying goes through; it is refused anyway.
 * When identity cannot answer, the write is 503: the gate fails closed.
 */
import { signToken, type TokenVerifier } from '@cs/auth';
import { emailRequestMessages } from '@cs/contract';
import { messages } from '@cs/errors';
import type { ServiceFetch } from '@cs/lifecycle';
import type { Logger } from '@cs/log';
import type { Request, Response } from 'express';
import { sendError } from './respond';
import type { Route, Upstream } from './route-table';

const GATED: ReadonlySet<Upstream> = new Set<Upstream>(['posts', 'notes', 'files']);
const WRITES: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** Verified users remembered per process, the oldest forgotten first: about a megabyte of ids. */
const REMEMBERED_MAX = 10_000;
/** How long identity may take to say: it answers from one read by `_id`. */
const ASK_TIMEOUT_MS = 3_000;

export type VerifiedEmailGate = (route: Route, req: Request, res: Response) => Promise<boolean>;

export function verifiedEmailGate({
  identityUrl,
  secret,
  fetch,
  tokens,
  logger,
}: {
  identityUrl: string;
  /** JWT_SECRET, shared with identity: it signs the question's token. */
  secret: string;
  fetch: ServiceFetch;
  tokens: TokenVerifier;
  logger: Logger;
}): VerifiedEmailGate {
  const verified = new Set<string>();

  async function isVerified(userId: string): Promise<boolean> {
    const token = signToken(userId, { secret, expiresIn: '1m' });
    const res = await fetch(`${identityUrl}/internal/email-verified`, {
      headers: { authorization: `Bearer ${token}` },
      signal: AbortSignal.timeout(ASK_TIMEOUT_MS),
    });
    if (!res.ok) throw new Error(`identity answered ${res.status}`);
    return ((await res.json()) as { emailVerified?: unknown }).emailVerified === true;
  }

  /** Whether the request may go on; when not, its answer is sent. After the route's auth check. */
  return async function requireVerifiedEmail(route, req, res) {
    if (!GATED.has(route.upstream) || !WRITES.has(req.method)) return true;
    // Every gated write needs a token, checked already (authGuard): this only reads its user.
    const userId = await tokens.userIdFromAuthorization(req.headers.authorization);
    if (verified.has(userId)) return true;
    let answer: boolean;
    try {
      answer = await isVerified(userId);
    } catch (err) {
      logger.warn({ err }, 'could not ask identity whether an address is verified');
      sendError(res, 503, messages.unavailable);
      return false;
    }
    if (!answer) {
      sendError(res, 403, emailRequestMessages.verifyEmailFirst);
      return false;
    }
    if (verified.size >= REMEMBERED_MAX) verified.delete(verified.values().next().value as string);
    verified.add(userId);
    return true;
  };
}
