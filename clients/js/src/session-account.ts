/**
 * The account a session's access token is of, for a session that came without its address (from
 * the refresh cookie, or a provider's sign-in), or whose address may have changed (a link's).
 */
import type { Fetch, SessionKeeping, SessionTokens } from './calls.js';
import { apiErrorOf } from './errors.js';
import type { Account } from './identity.js';
import type { Session } from './session.js';

/**
 * The account of an access token, as `GET /api/auth/me` answers it: with that token as it is, which
 * no renewal replaces and whose refusal ends no session.
 */
export async function accountOf({ authUrl }: SessionKeeping, doFetch: Fetch, token: string): Promise<Account> {
  const me = await doFetch(new Request(authUrl('/api/auth/me'), { headers: { Authorization: `Bearer ${token}` } }));
  const account = (await me.json().catch(() => undefined)) as Account | undefined;
  if (!me.ok || !account) throw apiErrorOf(me, account, false);
  return account;
}

/** Keeps `pair`, which came without an address (from the cookie, or a provider's sign-in), as its account's session. */
export async function adopt(keeping: SessionKeeping, doFetch: Fetch, pair: SessionTokens): Promise<Session> {
  const { email, emailVerified } = await accountOf(keeping, doFetch, pair.token);
  return keeping.keep(email, { ...pair, emailVerified });
}
