/**
 * Refresh tokens: 256 random bits in base64url (43 characters), opaque, never a JWT and never
 * stored. What is stored is a keyed hash (HMAC-SHA256): a fast hash is right for random tokens,
 * and a copy of the database gives nothing that could be presented.
 *
 * A token's successor is derived from it (HMAC under a second key), not drawn at random: the same
 * token presented twice gets the same successor, which is what lets two tabs, or a retried
 * request, refresh with one token and both succeed, while only hashes are kept. Both keys come
 * from JWT_SECRET (HKDF, one label each), so there is no other secret to deploy; changing the
 * secret ends every session, as it already invalidates every access token.
 */
import { createHmac, hkdfSync, randomBytes } from 'node:crypto';

export interface RefreshTokens {
  /** A new session's first token. */
  fresh(): string;
  /** The keyed hash a token is stored and looked up by. */
  hashOf(token: string): string;
  /** The token that replaces `token` when it is spent: always the same one for the same token. */
  successorOf(token: string): string;
}

export function createRefreshTokens(secret: string): RefreshTokens {
  const key = (label: string) => Buffer.from(hkdfSync('sha256', secret, '', `refresh-token ${label}`, 32));
  const hashKey = key('hash');
  const successorKey = key('successor');
  const mac = (k: Buffer, token: string) => createHmac('sha256', k).update(token).digest('base64url');
  return {
    fresh: () => randomBytes(32).toString('base64url'),
    hashOf: (token) => mac(hashKey, token),
    successorOf: (token) => mac(successorKey, token),
  };
}
