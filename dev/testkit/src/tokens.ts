import { signToken } from '@cs/auth';
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
