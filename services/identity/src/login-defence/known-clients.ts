/**
 * Clients that logged in (or registered) here before: their bcrypt work is served before a crowd
 * of newcomers' (the priority line of the bcrypt bulkhead), so a crowd of addresses that never
 * logged in, each within its rate limit, cannot delay the people who use the service. Two kinds:
 *
 * - devices, by the token a successful login answers (device-tokens.ts): good for one account,
 *   from any address, the one a botnet with fresh addresses cannot have. The login decides
 *   (accounts.ts), since only the throttle knows whether a device failed too often since;
 * - addresses that logged in lately, whatever the account: it says nothing about which accounts
 *   exist. In this process's memory, at most MAX_ADDRESSES, each for KEEP_MS after its last login,
 *   the oldest forgotten first: a standing, not a security decision, so a restart or another
 *   replica that has not seen the address yet only means the normal line.
 */
import { type AppContext, clientAddressOf } from '@cs/koa';
import { createDeviceTokens } from './device-tokens';

const MAX_ADDRESSES = 100_000;
const KEEP_MS = 24 * 3_600_000;

/** `secret`: JWT_SECRET, which device tokens' key is derived from; `secure`: their cookie is Secure. */
export function createKnownClients(devices: { secret: string; secure: boolean }) {
  const tokens = createDeviceTokens(devices);
  /** Address → when it last logged in; Map keeps insertion order, so the oldest come first. */
  const seen = new Map<string, number>();
  return {
    /** After a successful login or registration to `email`: the address is known, and the device is answered a new token. */
    loggedIn(ctx: AppContext, email: string): void {
      const address = clientAddressOf(ctx);
      seen.delete(address);
      seen.set(address, Date.now());
      for (const oldest of seen.keys()) {
        if (seen.size <= MAX_ADDRESSES) break;
        seen.delete(oldest);
      }
      tokens.give(ctx, email);
    },
    has(address: string): boolean {
      const at = seen.get(address);
      return at !== undefined && Date.now() - at < KEEP_MS;
    },
    /** The device the request's token proves for `email` (normalized), if it presents a good one. */
    deviceOf(ctx: AppContext, email: string): string | undefined {
      return tokens.deviceOf(tokens.presented(ctx), email);
    },
  };
}

export type KnownClients = ReturnType<typeof createKnownClients>;
