/**
 * The account's side of signing in with providers: a login code traded for a session (`exchange`),
 * and the identities an account lists and unlinks.
 */
import { oidcMessages } from '@cs/contract';
import { HttpError } from '@cs/errors';
import type { UserModel } from '../accounts/model';
import type { Sessions, SignedIn } from '../sessions/sessions';
import type { Identities, LinkedIdentity } from './identities';
import type { LoginCodes } from './login-codes';

export function createAccountAccess({
  users,
  sessions,
  codes,
  identities,
}: {
  users: UserModel;
  sessions: Sessions;
  codes: LoginCodes;
  identities: Identities;
}) {
  return {
    /** A session for the account of `code`, as a login answers it; 400 for a code that cannot be redeemed. */
    async exchange(code: string, verifier: string, userAgent: string | undefined): Promise<SignedIn> {
      const userId = await codes.redeem(code, verifier);
      const user = await users.findById(userId, { emailVerified: 1 }).lean();
      // Deleted between the callback and the exchange: the code logs into nothing.
      if (!user) throw new HttpError(400, oidcMessages.invalidCode);
      return { ...(await sessions.start(userId, userAgent)), emailVerified: user.emailVerified === true };
    },

    list: (userId: string): Promise<LinkedIdentity[]> => identities.list(userId),

    /** 409 when it is the last way to log in: no password, and no other identity. */
    async unlink(userId: string, identityId: string): Promise<void> {
      const user = await users.findById(userId, { password: 1 }).select('+password').lean();
      if (!user) throw new HttpError(404, oidcMessages.identityNotFound);
      await identities.unlink(userId, identityId, Boolean(user.password));
    },
  };
}

export type AccountAccess = ReturnType<typeof createAccountAccess>;
