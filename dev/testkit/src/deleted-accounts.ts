import type request from 'supertest';
import { type Caller, newCaller } from './tokens';

type Agent = ReturnType<typeof request>;

/** Tells a service, as identity does, that the caller's account is deleted. */
export function tellDeleted(http: Agent, caller: Caller) {
  return http.post('/internal/users/deleted').set(caller.auth);
}

/** A caller whose account the service was told is deleted, holding a token that still verifies. */
export async function deletedCaller(http: Agent): Promise<Caller> {
  const caller = newCaller();
  const res = await tellDeleted(http, caller);
  if (res.status !== 204) throw new Error(`/internal/users/deleted answered ${res.status}: ${res.text}`);
  return caller;
}
