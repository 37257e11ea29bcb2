/**
 * The signed-in person. The refresh token lives in an HttpOnly cookie that this page's script
 * cannot read (the client library's cookie mode); the access token and the address are kept
 * here, in memory only. A reload or a new tab gets a fresh access token from the cookie
 * (`api.resume()`), so the session outlives both; logging out ends it on the server and clears
 * the cookie.
 *
 * Since the script cannot see the cookie, it keeps a hint beside it: `content-service.signed-in`
 * in localStorage, set whenever a session is saved (login, register, a refresh, a new password)
 * and removed whenever it is cleared (logout, a refresh refused, a session ended elsewhere) or a
 * resume finds none. It holds no secret, only "1". A page load asks for a refresh only when the
 * hint is there, so a visitor who never logged in (or logged out) is not answered a 401 on every
 * first load. Where localStorage cannot be read, the page asks, as it did before the hint.
 */
import { memoryStore, type Session, type SessionStore } from '@content-service/client';

const HINT = 'content-service.signed-in';

function hint(present: boolean): void {
  try {
    if (present) localStorage.setItem(HINT, '1');
    else localStorage.removeItem(HINT);
  } catch {
    // Storage refused (a private mode, a quota): the next load asks, as without the hint.
  }
}

const memory = memoryStore();

export const sessionStore: SessionStore = {
  load: () => memory.load(),
  save(session) {
    memory.save(session);
    hint(true);
  },
  clear() {
    memory.clear();
    hint(false);
  },
};

export type { Session };

/** Whether this browser may have a session to take up (the hint, or storage that cannot say). */
export function mayBeSignedIn(): boolean {
  try {
    return localStorage.getItem(HINT) !== null;
  } catch {
    return true;
  }
}

/** A resume found no session: the next load does not ask again. */
export function noSessionHere(): void {
  hint(false);
}

export function currentSession(): Session | undefined {
  return sessionStore.load();
}

export function startSession(session: Session): void {
  sessionStore.save(session);
}

export function endSession(): void {
  sessionStore.clear();
}
