/**
 * The signed-in person: the token and the address it was issued for, in sessionStorage (it
 * lives as long as the tab), through the client library's store. Logging out discards it; tokens
 * cannot be revoked (the contract).
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
