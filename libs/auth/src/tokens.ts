/**
 * Signed tokens, as the contract defines them: HS256 (pinned on verify), the user id as the only
 * custom claim, `iat` and `exp` added by the library. Shared by the gateway and every service,
 * so that each hop applies exactly the same rules and messages. Whether a valid token was revoked
 * is the verifier's question (verifier.ts).
 */
import { createSecretKey, type KeyObject } from 'node:crypto';
import { HttpError, messages } from '@cs/errors';
import jwt from 'jsonwebtoken';

export interface TokenSettings {
  secret: string;
  /** A duration such as `1h` or `7d` (JWT_EXPIRES_IN). */
  expiresIn: string;
}

const ALGORITHM = 'HS256';
const OBJECT_ID = /^[0-9a-f]{24}$/i;
/** Longer than any lifetime we would configure; a token claiming more was not made by us. */
const MAX_LIFETIME_S = 400 * 24 * 3600;
/** Far beyond any token we issue; refusing early keeps hostile headers cheap. */
const MAX_TOKEN_LENGTH = 2048;

/**
 * The secret as a KeyObject, made once. Given a string, jsonwebtoken builds a key on every call,
 * first trying (and failing) to read it as a public key: a profile of the files service showed
 * that at about 7% of its CPU under load.
 */
const keys = new Map<string, KeyObject>();
function keyOf(secret: string): KeyObject {
  let key = keys.get(secret);
  if (!key) {
    key = createSecretKey(Buffer.from(secret, 'utf8'));
    keys.set(secret, key);
  }
  return key;
}

/**
 * A token for `userId`. `issuedAt` (seconds since the epoch; now by default) makes it again the
 * very token issued then: the same claims under the same key give the same bytes.
 */
export function signToken(userId: string, { secret, expiresIn }: TokenSettings, issuedAt?: number): string {
  return jwt.sign(issuedAt === undefined ? { id: userId } : { id: userId, iat: issuedAt }, keyOf(secret), {
    algorithm: ALGORITHM,
    expiresIn: expiresIn as jwt.SignOptions['expiresIn'],
  });
}

function invalid(cause?: unknown): HttpError {
  return new HttpError(401, messages.invalidToken, { cause });
}

/** What a verified token says: whose it is, when it was issued and when it expires (seconds since the epoch). */
export interface VerifiedToken {
  userId: string;
  issuedAt: number;
  expiresAt: number;
}

/** Verifies a bare token (signature, expiry, claims), or throws 401 invalid-or-expired. */
export function verifyClaims(token: string, secret: string): VerifiedToken {
  return claimsOf(token, secret, { expired: false });
}

/**
 * Verifies a bare token's signature and claims, whether or not it has expired: a token we made.
 * For logout, which ends what it can with any of ours; throws 401 for any other.
 */
export function verifySigned(token: string, secret: string): VerifiedToken {
  return claimsOf(token, secret, { expired: true });
}

function claimsOf(token: string, secret: string, { expired }: { expired: boolean }): VerifiedToken {
  if (token.length === 0 || token.length > MAX_TOKEN_LENGTH) throw invalid();
  let payload: string | jwt.JwtPayload;
  try {
    payload = jwt.verify(token, keyOf(secret), { algorithms: [ALGORITHM], ignoreExpiration: expired });
  } catch (err) {
    throw invalid(err);
  }
  if (typeof payload !== 'object' || payload === null) throw invalid();
  const { id, iat, exp } = payload as Record<string, unknown>;
  if (typeof id !== 'string' || !OBJECT_ID.test(id)) throw invalid();
  if (typeof iat !== 'number' || typeof exp !== 'number' || exp <= iat || exp - iat > MAX_LIFETIME_S) {
    throw invalid();
  }
  return { userId: id.toLowerCase(), issuedAt: iat, expiresAt: exp };
}

/** Verifies a bare token and returns the caller's user id, or throws 401 invalid-or-expired. */
export function verifyToken(token: string, secret: string): string {
  return verifyClaims(token, secret).userId;
}

/**
 * The contract's Authentication rules 3 to 5: a missing header, or one that does not start with
 * `Bearer `, is 401 no-token-provided; the token is the text after the first space.
 */
export function bearerToken(header: string | undefined): string {
  if (typeof header !== 'string' || !header.startsWith('Bearer ')) {
    throw new HttpError(401, messages.noToken);
  }
  return header.slice(header.indexOf(' ') + 1);
}

/** bearerToken, then verifyToken: the user id of a request's token. */
export function userIdFromAuthorization(header: string | undefined, secret: string): string {
  return verifyToken(bearerToken(header), secret);
}
