/** What a route knows of the request it serves: its client (for the password work), and a proof of ownership. */
import type { TokenVerifier } from '@cs/auth';
import { type AppContext, type Bulkhead, clientAddressOf } from '@cs/koa';
import type { Client, Proof } from './accounts/accounts';
import type { KnownClients } from './login-defence/known-clients';

/** The client of a request, whose password work runs in its turn of the bcrypt bulkhead. */
export function requestClients({ bcrypt, known }: { bcrypt: Bulkhead; known: KnownClients }) {
  return (ctx: AppContext): Client => {
    const address = clientAddressOf(ctx);
    return {
      address,
      userAgent: ctx.get('user-agent') || undefined,
      // Every route that hashes or compares a password runs that work, and the lookups before it,
      // in its client's turn: after its body's checks, before any lookup, and not the writes after.
      // A trusted device's login takes the priority line in its account's turn (known-clients.ts).
      passwordTurn: (work, { trustedFor } = {}) =>
        trustedFor === undefined
          ? bcrypt.run(address, work, { priority: known.has(address) })
          : bcrypt.run(`account ${trustedFor}`, work, { priority: true }),
    };
  };
}

/** The password a route was given, and the caller's token's second: its proof of ownership (accounts.ts). */
export function proofOf(tokens: TokenVerifier, ctx: AppContext, password: string): Proof {
  return { password, issuedAt: tokens.signedToken(ctx.headers.authorization).issuedAt };
}
