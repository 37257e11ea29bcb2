/**
 * Device tokens, after OWASP's "Slow Down Online Guessing Attacks with Device Cookies": a login
 * that succeeds is answered a token that says "this device has known the password of this
 * account". A later login to that account that presents it is served ahead of everyone else in
 * the bcrypt bulkhead (its priority line, which logins without one cannot fill) and is not slowed
 * by the failures others caused to the account (login-throttle.ts). A crowd of addresses guessing
 * passwords then cannot delay or lock out the person, from whatever network they come.
 *
 * How a client gets and gives it back:
 * - every successful login or registration answers a new one, in the response header
 *   `X-Device-Token` (for any client) and in the cookie `cs_device` (`HttpOnly; SameSite=Strict;
 *   Path=/api/auth`, `Secure` when WEB_URL is https, for DEVICE_TOKEN_TTL_S), which a browser on
 *   this origin sends back by itself;
 * - a login presents it in the request header `X-Device-Token`, or else in that cookie. A client
 *   keeps the latest one it was given.
 *
 *   base64url( issued at (6 bytes, seconds) · device id (16, random) · MAC (16) )
 *
 * 38 bytes, 51 characters. The MAC (HMAC-SHA256, cut to 128 bits, under a key derived from
 * JWT_SECRET by HKDF) covers the rest and the account's normalized address, which the token does
 * not carry: a token is good only for the account it was issued for, checked without a database
 * read, and tells nobody which account that is. Nothing is stored when one is issued.
 *
 * A token that fails DEVICE_FREE_FAILURES logins within an hour stops being trusted (OWASP's
 * device lockout; counted by the login throttle, by device id): a stolen one buys a few guesses.
 */
import { createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import type { AppContext } from '@cs/koa';
import { cookieOf } from '../sessions/refresh-cookie';

export const DEVICE_TOKEN_HEADER = 'x-device-token';
export const DEVICE_COOKIE = 'cs_device';
/** How long a device token is trusted after it was issued: each login renews it. */
export const DEVICE_TOKEN_TTL_S = 180 * 24 * 3600;
const PATH = '/api/auth';

const AT_BYTES = 6;
const ID_BYTES = 16;
const MAC_BYTES = 16;
const SIGNED_BYTES = AT_BYTES + ID_BYTES;
const TOKEN_LENGTH = Math.ceil(((SIGNED_BYTES + MAC_BYTES) * 4) / 3);

export interface DeviceTokens {
  /** A new token for a device that has just proved it knows the password of `email` (normalized). */
  issue(email: string, now?: number): string;
  /**
   * The device's id when `token` is one of ours, issued for `email` less than DEVICE_TOKEN_TTL_S
   * ago; undefined otherwise (none, malformed, another account's, tampered with, expired).
   */
  deviceOf(token: string | undefined, email: string, now?: number): string | undefined;
  /** The token a request presents: its `X-Device-Token` header, or else its `cs_device` cookie. */
  presented(ctx: AppContext): string | undefined;
  /** Answers a new token for `email`, in the header and the cookie. */
  give(ctx: AppContext, email: string): void;
}

export function createDeviceTokens({ secret, secure }: { secret: string; secure: boolean }): DeviceTokens {
  const macKey = Buffer.from(hkdfSync('sha256', secret, '', 'device-token mac', 32));
  const macOf = (email: string, signed: Buffer) =>
    createHmac('sha256', macKey).update(signed).update(email, 'utf8').digest().subarray(0, MAC_BYTES);
  const seconds = (ms: number) => Math.floor(ms / 1000);

  const tokens: DeviceTokens = {
    issue(email, now = Date.now()) {
      const signed = Buffer.alloc(SIGNED_BYTES);
      signed.writeUIntBE(seconds(now), 0, AT_BYTES);
      randomBytes(ID_BYTES).copy(signed, AT_BYTES);
      return Buffer.concat([signed, macOf(email, signed)]).toString('base64url');
    },

    deviceOf(token, email, now = Date.now()) {
      if (token?.length !== TOKEN_LENGTH) return undefined;
      const bytes = Buffer.from(token, 'base64url');
      // Decoding skips what is not base64url: the same token encoded again must be what was sent.
      if (bytes.length !== SIGNED_BYTES + MAC_BYTES || bytes.toString('base64url') !== token) return undefined;
      const signed = bytes.subarray(0, SIGNED_BYTES);
      if (!timingSafeEqual(bytes.subarray(SIGNED_BYTES), macOf(email, signed))) return undefined;
      const age = seconds(now) - signed.readUIntBE(0, AT_BYTES);
      if (age < 0 || age >= DEVICE_TOKEN_TTL_S) return undefined;
      return signed.subarray(AT_BYTES).toString('base64url');
    },

    presented(ctx) {
      return ctx.get(DEVICE_TOKEN_HEADER).trim() || cookieOf(ctx, DEVICE_COOKIE);
    },

    give(ctx, email) {
      const token = tokens.issue(email);
      ctx.set('X-Device-Token', token);
      ctx.append(
        'Set-Cookie',
        `${DEVICE_COOKIE}=${token}; Path=${PATH}; Max-Age=${DEVICE_TOKEN_TTL_S}; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`,
      );
    },
  };
  return tokens;
}
