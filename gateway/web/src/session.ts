/**
 * The signed-in person: the tokens and the address they were issued for, in sessionStorage (it
 * lives as long as the tab), through the client library's store, which refreshes the access
 * token before it expires. Logging out ends the session on the server and discards it here.
 */
import { type Session, webStorage } from '@content-service/client';

export const sessionStore = webStorage(sessionStorage, 'content-service.session');

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
