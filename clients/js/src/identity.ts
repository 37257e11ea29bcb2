/**
 * The calls of the identity service (everything under /api/auth, and /api/users): getting,
 * resuming and ending a session, the person's sessions on every device, their account, and the
 * names others go by.
 */
import type { Calls, Fetch, Listed, Raw, SessionKeeping, SessionTokens } from './calls.js';
import { addressCalls } from './email-address.js';
import { apiErrorOf, NetworkError } from './errors.js';
import type { components } from './schema.js';
import type { Session, SessionStore } from './session.js';
import { adopt } from './session-account.js';

type Schemas = components['schemas'];
export type SessionInfo = Schemas['Session'];
export type Account = Schemas['Me'];
/** A provider's account linked to the signed-in person's, which signs them in. */
export type Identity = Listed<'/api/auth/identities'>;

export function identityCalls(
  raw: Raw,
  run: Calls['run'],
  keeping: SessionKeeping,
  store: SessionStore,
  cookieMode: boolean,
  doFetch: Fetch,
) {
  const { keep, modeHeaders, renewable, sendRefresh } = keeping;
  const signIn = async (
    path: '/api/auth/register' | '/api/auth/login',
    body: { email: string; password: string; displayName?: string },
  ) => keep(body.email, await run(() => raw.POST(path, { body, headers: modeHeaders })));

  return {
    /** A new account (with the name others see on its posts, if given), signed in. */
    register: (email: string, password: string, profile: { displayName?: string } = {}) =>
      signIn('/api/auth/register', { email, password, ...profile }),
    login: (email: string, password: string) => signIn('/api/auth/login', { email, password }),
    /**
     * In cookie mode, the session this browser already has (after a reload, or in a new tab): a
     * fresh access token from the cookie, and the account's address. Undefined when there is
     * none. Outside cookie mode, the store's session as it is.
     */
    resume: async (): Promise<Session | undefined> => {
      const current = store.load();
      if (current || !cookieMode) return current;
      const refreshed = await sendRefresh(undefined).catch((err: unknown) => {
        throw new NetworkError('The API could not be reached', 'api', { cause: err });
      });
      if (refreshed.status === 401) return undefined;
      const pair = (await refreshed.json().catch(() => undefined)) as SessionTokens | undefined;
      if (!refreshed.ok || !pair) throw apiErrorOf(refreshed, pair, false);
      return adopt(keeping, doFetch, pair);
    },
    /**
     * Ends the session on the server and forgets it here: its refresh token (or cookie) stops
     * working, and so does its access token, on every replica within about a second.
     */
    logout: async () => {
      const current = store.load();
      store.clear();
      if (!current || !renewable(current)) return;
      await run(() =>
        raw.POST('/api/auth/logout', {
          ...(cookieMode ? {} : { body: { refreshToken: current.refreshToken } }),
          headers: { ...modeHeaders, Authorization: `Bearer ${current.token}` },
        }),
      );
    },

    sessions: {
      /**
       * The signed-in person's live sessions, newest first; its own is `current` (in cookie mode,
       * identity knows it from the cookie without a lookup).
       */
      list: () => run(() => raw.GET('/api/auth/sessions', { headers: modeHeaders })),
      /** Ends one of them (another device, say). */
      end: (id: string) =>
        run(() => raw.DELETE('/api/auth/sessions/{id}', { params: { path: { id } } })).then(() => undefined),
      /** Logs out everywhere, this client included. */
      endAll: async () => {
        await run(() => raw.DELETE('/api/auth/sessions'));
        store.clear();
      },
    },

    account: {
      /** The signed-in person's account. */
      me: () => run(() => raw.GET('/api/auth/me')),
      /** Sets the name others see on the person's posts; null removes it. */
      setDisplayName: (displayName: string | null) => run(() => raw.PATCH('/api/auth/me', { body: { displayName } })),
      /** Sets a new password: every other session ends, and this one goes on with the new pair. */
      changePassword: async (currentPassword: string, newPassword: string) => {
        const pair = await run(() =>
          raw.PUT('/api/auth/password', { body: { currentPassword, newPassword }, headers: modeHeaders }),
        );
        keep(store.load()?.email ?? '', pair);
      },
      /** Deletes the account and everything it owns, then ends the session. */
      remove: async (password: string) => {
        await run(() => raw.DELETE('/api/auth/account', { body: { password } }));
        store.clear();
      },
      /** E-mails a link to set a new password (the same answer whether or not the address has an account). */
      requestPasswordReset: (email: string) =>
        run(() => raw.POST('/api/auth/password-reset', { body: { email } })).then(() => undefined),
      /** Sets the password with the token from the e-mail's link; then log in with it. */
      confirmPasswordReset: (token: string, newPassword: string) =>
        run(() => raw.POST('/api/auth/password-reset/confirm', { body: { token, newPassword } })).then(() => undefined),
      ...addressCalls(raw, run, keeping, store, doFetch),
      /** The providers' accounts linked to this one, `[{_id, provider, email, createdAt}]`. */
      identities: () => run(() => raw.GET('/api/auth/identities')),
      /** Unlinks one (by `_id`); an ApiError 409 when it is the account's last way to log in. */
      unlinkIdentity: (id: string) =>
        run(() => raw.DELETE('/api/auth/identities/{id}', { params: { path: { id } } })).then(() => undefined),
    },

    users: {
      /** The display names of the accounts `ids` (up to 50 a call), by id; unknown ids are left out. */
      names: async (ids: readonly string[]): Promise<Map<string, string | null>> => {
        const distinct = [...new Set(ids)];
        const names = new Map<string, string | null>();
        for (let from = 0; from < distinct.length; from += 50) {
          const found = await run(() =>
            raw.GET('/api/users', { params: { query: { ids: distinct.slice(from, from + 50).join(',') } } }),
          );
          for (const user of found) names.set(user._id, user.displayName);
        }
        return names;
      },
    },
  };
}
