/** Where the client keeps the signed-in person: in memory by default, or any store given. */

export interface Session {
  token: string;
  email: string;
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

/** In a Web Storage area (`sessionStorage` lasts as long as the tab), as JSON under `key`. */
export function webStorage(area: Storage, key = 'content-service.session'): SessionStore {
  return {
    load() {
      try {
        const parsed = JSON.parse(area.getItem(key) ?? 'null') as Partial<Session> | null;
        return typeof parsed?.token === 'string' && typeof parsed.email === 'string'
          ? { token: parsed.token, email: parsed.email }
          : undefined;
      } catch {
        return undefined;
      }
    },
    save: (session) => area.setItem(key, JSON.stringify(session)),
    clear: () => area.removeItem(key),
  };
}
