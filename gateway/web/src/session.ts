/**
 * The signed-in person: the token and the address it was issued for, in sessionStorage (it
 * lives as long as the tab). Logging out discards it; tokens cannot be revoked (the contract).
 */
const KEY = 'content-service.session';

export interface Session {
  token: string;
  email: string;
}

export function currentSession(): Session | undefined {
  try {
    const raw = sessionStorage.getItem(KEY);
    if (!raw) return undefined;
    const parsed = JSON.parse(raw) as Partial<Session>;
    return typeof parsed.token === 'string' && typeof parsed.email === 'string'
      ? { token: parsed.token, email: parsed.email }
      : undefined;
  } catch {
    return undefined;
  }
}

export function startSession(session: Session): void {
  sessionStorage.setItem(KEY, JSON.stringify(session));
}

export function endSession(): void {
  sessionStorage.removeItem(KEY);
}
