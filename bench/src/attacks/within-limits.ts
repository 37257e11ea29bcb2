/** The check that a run's streams stay within the gateway's limits and never share an address. */
import type { PacedRequest, PacedStream } from '../paced-spec';
import type { Attack } from './attack';
import { AUTH_RATE_LIMIT, RATE_LIMIT, RATE_WINDOW_S } from './settings';

/** The /api/auth routes that check no password, on the default limit (gateway/src/route-table.ts). */
const NO_PASSWORD = /^\/api\/auth\/(?:refresh|logout|me|sessions(?:\/[^/]+)?)\/?$/;
const isAuth = (request: PacedRequest) =>
  request.kind === 'unknown login' ||
  ('path' in request && request.path.startsWith('/api/auth') && !NO_PASSWORD.test(request.path));
/** Requests one of a stream's counts for: a create and publish is two. */
const requestsEach = (request: PacedRequest) => (request.kind === 'create and publish' ? 2 : 1);

/**
 * Throws unless every address stays within the gateway's limits: at most this many requests in
 * any window of RATE_WINDOW_S. `spanS`: how long the streams' addresses are used in all (an
 * attack's are used in its phase only; the bystander's in every phase, so over any window).
 */
function withinLimits(streams: PacedStream[], spanS: number): void {
  const perAddress = new Map<string, number>();
  for (const s of streams) {
    const auth = isAuth(s.request);
    const limit = auth ? AUTH_RATE_LIMIT : RATE_LIMIT;
    // A botnet's addresses are each used for perAddress requests, and never again.
    if (s.fresh && s.fresh.perAddress * requestsEach(s.request) >= limit)
      throw new Error(`${s.name}: ${s.fresh.perAddress} requests an address, against a limit of ${limit}`);
    for (const address of s.addresses) {
      const key = `${auth ? 'auth' : 'default'} ${address}`;
      perAddress.set(key, (perAddress.get(key) ?? 0) + (s.ratePerS * requestsEach(s.request)) / s.addresses.length);
    }
  }
  for (const [key, perS] of perAddress) {
    const most = Math.floor(perS * Math.min(spanS, RATE_WINDOW_S)) + 1;
    const limit = key.startsWith('auth') ? AUTH_RATE_LIMIT : RATE_LIMIT;
    if (most >= limit) throw new Error(`${key}: up to ${most} requests a window, against a limit of ${limit}`);
  }
}

/**
 * Throws unless the bystander and every planned attack stay within the limits, and no two of them
 * (nor the accounts' own 127.0.0.1) share an address.
 */
export function checkPlan(bystander: PacedStream[], planned: Attack[], attackS: number): void {
  withinLimits(bystander, RATE_WINDOW_S);
  const used = new Set([...bystander.flatMap((s) => s.addresses), '127.0.0.1']);
  for (const attack of planned) {
    withinLimits(attack.streams, attack.durationS ?? attackS);
    for (const address of new Set([...attack.streams.flatMap((s) => s.addresses), ...(attack.addresses ?? [])])) {
      if (used.has(address)) throw new Error(`${attack.name}: ${address} is used elsewhere`);
      used.add(address);
    }
  }
}
