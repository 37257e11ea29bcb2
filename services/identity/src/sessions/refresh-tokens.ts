/**
 * Refresh tokens: opaque to clients, never a JWT, never stored. A token carries what a refresh
 * needs to know before any read, signed so that only identity can make one:
 *
 *   base64url( session id (12 bytes) · user id (12) · tokensFrom (6) · secret (32) · MAC (16) )
 *
 * 78 bytes, 104 characters. The MAC (HMAC-SHA256, cut to 128 bits) covers the rest: a token that
 * fails it is refused without a database read. `tokensFrom` is the session's floor for the `iat`
 * of its access tokens (sessions.ts), fixed when it starts.
 *
 * What is stored is a keyed hash of the whole token (HMAC-SHA256): a fast hash is right for a
 * random secret, and a copy of the database gives nothing that could be presented.
 *
 * A token's successor carries the same session, user and floor, and a secret derived from the
 * token (HMAC under a second key), not drawn at random: the same token presented twice gets the
 * same successor, which is what lets two tabs, or a retried request, refresh with one token and
 * both succeed, while only hashes are kept. The keys come from JWT_SECRET (HKDF, one label each),
 * so there is no other secret to deploy; changing the secret ends every session, as it already
 * invalidates every access token.
 */
import { createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';

/** What a refresh token says about itself. */
export interface RefreshTokenClaims {
  /** 24 hex characters. */
  sessionId: string;
  /** 24 hex characters (an ObjectId). */
  userId: string;
  /** Seconds since the epoch: the session's access tokens are issued no earlier. */
  tokensFrom: number;
}

export interface RefreshTokens {
  /** A new session's first token. */
  fresh(claims: RefreshTokenClaims): string;
  /** What `token` says, or null when it is not one of ours (its shape, or its MAC). */
  open(token: string): RefreshTokenClaims | null;
  /** The keyed hash a token is stored and looked up by. */
  hashOf(token: string): string;
  /** The token that replaces `token` (whose claims are `claims`): always the same one for the same token. */
  successorOf(token: string, claims: RefreshTokenClaims): string;
}

const ID_BYTES = 12;
const FLOOR_BYTES = 6;
const SECRET_BYTES = 32;
const MAC_BYTES = 16;
const SIGNED_BYTES = 2 * ID_BYTES + FLOOR_BYTES + SECRET_BYTES;
/** The length of a token in characters: base64url of SIGNED_BYTES + MAC_BYTES. */
export const REFRESH_TOKEN_LENGTH = Math.ceil(((SIGNED_BYTES + MAC_BYTES) * 4) / 3);
const HEX_ID = /^[0-9a-f]{24}$/;

export function createRefreshTokens(secret: string): RefreshTokens {
  const key = (label: string) => Buffer.from(hkdfSync('sha256', secret, '', `refresh-token ${label}`, 32));
  const hashKey = key('hash');
  const successorKey = key('successor');
  const macKey = key('mac');
  const hmac = (k: Buffer, data: string | Buffer) => createHmac('sha256', k).update(data).digest();

  const make = ({ sessionId, userId, tokensFrom }: RefreshTokenClaims, tokenSecret: Buffer): string => {
    if (!HEX_ID.test(sessionId) || !HEX_ID.test(userId)) throw new Error('refresh token ids must be 24 hex digits');
    const signed = Buffer.alloc(SIGNED_BYTES);
    signed.write(sessionId, 0, 'hex');
    signed.write(userId, ID_BYTES, 'hex');
    signed.writeUIntBE(tokensFrom, 2 * ID_BYTES, FLOOR_BYTES);
    tokenSecret.copy(signed, 2 * ID_BYTES + FLOOR_BYTES, 0, SECRET_BYTES);
    return Buffer.concat([signed, hmac(macKey, signed).subarray(0, MAC_BYTES)]).toString('base64url');
  };

  return {
    fresh: (claims) => make(claims, randomBytes(SECRET_BYTES)),
    open(token) {
      if (token.length !== REFRESH_TOKEN_LENGTH) return null;
      const bytes = Buffer.from(token, 'base64url');
      // Decoding skips what is not base64url: the same token encoded again must be what was sent.
      if (bytes.length !== SIGNED_BYTES + MAC_BYTES || bytes.toString('base64url') !== token) return null;
      const signed = bytes.subarray(0, SIGNED_BYTES);
      if (!timingSafeEqual(bytes.subarray(SIGNED_BYTES), hmac(macKey, signed).subarray(0, MAC_BYTES))) return null;
      return {
        sessionId: signed.toString('hex', 0, ID_BYTES),
        userId: signed.toString('hex', ID_BYTES, 2 * ID_BYTES),
        tokensFrom: signed.readUIntBE(2 * ID_BYTES, FLOOR_BYTES),
      };
    },
    hashOf: (token) => hmac(hashKey, token).toString('base64url'),
    successorOf: (token, claims) => make(claims, hmac(successorKey, token)),
  };
}
