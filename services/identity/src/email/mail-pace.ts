/**
 * One mail a minute per account (EMAIL_RESEND_INTERVAL), for each kind of link: counted from when the
 * account's live token of that kind was issued (one-time-tokens.ts keeps one per account and
 * purpose), so the pace costs one read by `_id` and no record of its own. Registration's first
 * link counts too: asking for another at once is 429 until the minute has passed.
 */
import { HttpError, messages as httpMessages } from '@cs/errors';
import type { OneTimeTokens } from '../one-time-tokens/one-time-tokens';

/**
 * Throws 429 with Retry-After while the subject's last token is younger than the pace. Not exact
 * under races: two requests at once both read the token before either issues the next, and both
 * send (as password reset's count is not).
 */
export async function checkMailPace(
  tokens: Pick<OneTimeTokens<Record<string, unknown>>, 'issuedAt'>,
  subject: string,
  { paceMs, now }: { paceMs: number; now: number },
): Promise<void> {
  if (paceMs === 0) return;
  const issuedAt = await tokens.issuedAt(subject);
  if (!issuedAt) return;
  const waitMs = issuedAt.getTime() + paceMs - now;
  if (waitMs <= 0) return;
  throw new HttpError(429, httpMessages.tooManyRequests, {
    headers: { 'Retry-After': String(Math.ceil(waitMs / 1000)) },
  });
}
