/**
 * Where the client keeps the signed-in person: in memory by default, in a Web Storage area
 * (`localStorage` keeps a session across reloads and tabs), or any store given (React Native's
 * secure storage, say).
 */

export interface Session {
  /** The access token. */
  token: string;
  email: string;
  /** What gets the next pair when the access token expires; absent: the session ends with it. */
  refreshToken?: string;
  /** When the access token expires (ms since the epoch), as far as the client knows. */
  expiresAt?: number;
  /** Whether the account's address is verified, as the API last said (undefined: it has not said). */
  emailVerified?: boolean;
}

export interface SessionStore {
  load(): Session | undefined;
  save(session: Session): void;
  clear(): void;
}

/** For as long as the client object lives. */
export function memoryStore(): SessionStore {
  let current: Session | undefined;
  return {
    load: () => current,
    save: (session) => {
      current = session;
    },
    clear: () => {
      current = undefined;
    },
  };
}

/**
 * In a Web Storage area, as JSON under `key`: `sessionStorage` lasts as long as the tab,
 * `localStorage` across reloads and tabs (they then share one session, and refresh it safely).
 */
export function webStorage(area: Storage, key = 'content-service.session'): SessionStore {
  return {
    load() {
      try {
        const parsed = JSON.parse(area.getItem(key) ?? 'null') as Partial<Session> | null;
        if (typeof parsed?.token !== 'string' || typeof parsed.email !== 'string') return undefined;
        return {
          token: parsed.token,
          email: parsed.email,
          ...(typeof parsed.refreshToken === 'string' ? { refreshToken: parsed.refreshToken } : {}),
          ...(typeof parsed.expiresAt === 'number' ? { expiresAt: parsed.expiresAt } : {}),
          ...(typeof parsed.emailVerified === 'boolean' ? { emailVerified: parsed.emailVerified } : {}),
        };
      } catch {
        return undefined;
      }
    },
    save: (session) => area.setItem(key, JSON.stringify(session)),
    clear: () => area.removeItem(key),
  };
}
