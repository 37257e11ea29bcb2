/**
 * Every session of a user ends but the caller's own: after an e-mail change, whoever held a session
 * under the old address is out, and the person who confirmed stays in.
 *
 * The caller's session is the one its access token was issued in (session-list.ts finds it by the
 * token's second). Without a caller, or when its session is not among the live ones (another
 * user's token, an ended session), every session ends, and every access token with them.
 * Each other session ends as "end this session" ends it (its access tokens are revoked too). A
 * login that checked the old address before the change and starts its session after the list was
 * read is not ended: a window of one password compare, which the changed address closes for every
 * login after it.
 */
import { HttpError } from '@cs/errors';
import type { Sessions } from './sessions';

export async function endOtherSessions(
  sessions: Pick<Sessions, 'list' | 'end' | 'endAll'>,
  userId: string,
  caller: { issuedAt: number } | undefined,
): Promise<void> {
  const live = caller === undefined ? [] : await sessions.list(userId, { issuedAt: caller.issuedAt });
  if (!live.some((session) => session.current)) return sessions.endAll(userId);
  for (const session of live) {
    if (session.current) continue;
    // Ended meanwhile (a logout, its idle time): nothing left to end.
    await sessions.end(userId, session.id).catch((err: unknown) => {
      if (!(err instanceof HttpError && err.status === 404)) throw err;
    });
  }
}
