/**
 * Who is calling a service: the gateway writes the client's address (as its `trust proxy` resolves
 * it) into this header on every request it forwards, and drops any a client sent. A service uses
 * it to count per client (login throttle) and to take turns per client (bulkheads).
 */
export const CLIENT_ADDRESS_HEADER = 'x-internal-client-address';

export function clientAddressOf(ctx: { get(name: string): string }): string {
  return ctx.get(CLIENT_ADDRESS_HEADER) || 'unknown';
}
