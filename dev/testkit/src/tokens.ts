import { createTokenVerifier, RevocationList, signToken, type TokenVerifier } from '@cs/auth';
import { Types } from 'mongoose';
import { TEST_JWT_SECRET } from './constants';

export function newUserId(): string {
  return new Types.ObjectId().toHexString();
}

export function tokenFor(userId: string, expiresIn = '1h', secret = TEST_JWT_SECRET): string {
  return signToken(userId, { secret, expiresIn });
}

/** A user the tests act as: an id, and the Authorization header carrying a token for it. */
export interface Caller {
  id: string;
  auth: { Authorization: string };
}

export function newCaller(): Caller {
  const id = newUserId();
  return { id, auth: bearer(id) };
}

export function bearer(userId: string): { Authorization: string } {
  return { Authorization: `Bearer ${tokenFor(userId)}` };
}

/**
 * A service's token verifier as in production, with a revocation list that is current and holds
 * nothing revoked: what a service's own tests need. Identity's tests and the system's prove the
 * list itself, followed from identity's log.
 */
export function verifierWithoutRevocations(secret = TEST_JWT_SECRET): TokenVerifier {
  const list = new RevocationList();
  list.apply({ entries: [], last: 0 });
  return createTokenVerifier(secret, list);
}
