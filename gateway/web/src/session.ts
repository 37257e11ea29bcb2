/**
 * The signed-in person. The refresh token lives in an HttpOnly cookie that this page's script
 * cannot read (the client library's cookie mode); the access token and the address are kept
 * here, in memory only. A reload or a new tab gets a fresh access token from the cookie
 * (`api.resume()`), so the session outlives both; logging out ends it on the server and clears
 * the cookie.
 */
import { memoryStore, type Session } from '@content-service/client';

export const sessionStore = memoryStore();

export type { Session };

export function currentSession(): Session | undefined {
  return sessionStore.load();
}

export function startSession(session: Session): void {
  sessionStore.save(session);
}

export function endSession(): void {
  sessionStore.clear();
}
