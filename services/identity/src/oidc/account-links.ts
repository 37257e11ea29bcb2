/**
 * Which account a provider's sign-in logs into: the rules of linking.
 *
 * - A known identity (issuer, `sub`) logs into its account.
 * - An unknown identity whose provider vouches for its address (`email_verified: true`) and whose
 *   address belongs to an account is linked to that account. When that account's address was never
 *   verified, the provider's proof wins, for whoever registered the address first may not be its
 *   owner (pre-hijacking): the password is cleared (a reset can set one), every session ends, every
 *   other identity is unlinked, and the address is marked verified. Only then is it linked.
 * - An address in use that the provider does not vouch for: `email_in_use`; nothing is linked.
 * - Otherwise a new account, with no password, whose address is verified when the provider vouched
 *   for it, and not otherwise: an address no one proved is not counted as proven.
 * - A provider that gives no usable address: `email_missing`.
 */
import { oidcMessages } from '@cs/contract';
import { HttpError } from '@cs/errors';
import { isDuplicateKey, type Turns } from '@cs/mongo';
import { isAddress, normalizeEmail } from '../accounts/credentials';
import type { UserModel, UserRecord } from '../accounts/model';
import type { Sessions } from '../sessions/sessions';
import type { Identities, IdentityKey } from './identities';

/** What the provider said of the person, from the checked ID token (or its userinfo). */
export interface ProviderClaims extends IdentityKey {
  provider: string;
  email: string | undefined;
  /** `email_verified` was asserted true. */
  emailVerified: boolean;
}

export type SignInOutcome = { userId: string } | { error: 'email_missing' | 'email_in_use' };

export function createAccountLinks({
  users,
  identities,
  sessions,
  turns,
}: {
  users: UserModel;
  identities: Identities;
  sessions: Sessions;
  turns: Turns;
}) {
  /**
   * The takeover: in the account's turn, as a password write is (password-store.ts), so the new
   * version voids every reset link sent before and a password change racing with it is refused.
   */
  const takeOver = async (userId: string) => {
    const refused = () => new HttpError(409, oidcMessages.accountChanged);
    await turns.writeInTurn(`user:${userId}`, {
      read: () => users.findById(userId, { version: 1 }).lean<Pick<UserRecord, '_id' | 'version'>>(),
      write: async (user, version) => {
        const { matchedCount } = await users.updateOne(
          { _id: userId, version: user.version ?? null },
          { $set: { password: null, emailVerified: true, version } },
        );
        return matchedCount > 0 ? true : null;
      },
      missing: refused,
      busy: refused,
    });
    await Promise.all([sessions.endAll(userId), identities.forget(userId)]);
  };

  /** The provider's address, normalized, when an account may have it. */
  const addressOf = (email: string | undefined) => {
    const address = email === undefined ? undefined : normalizeEmail(email);
    return address !== undefined && isAddress(address) ? address : undefined;
  };

  async function signIn(claims: ProviderClaims, retried = false): Promise<SignInOutcome> {
    const known = await identities.accountOf(claims);
    if (known !== undefined) {
      if (await users.exists({ _id: known })) return { userId: known };
      // The account was deleted while its identity stayed behind (its deletion under way).
      await identities.drop(claims);
    }
    const email = addressOf(claims.email);
    if (email === undefined) return { error: 'email_missing' };
    const link = async (userId: string): Promise<SignInOutcome> => {
      if (await identities.link(userId, { ...claims, email })) return { userId };
      // Linked meanwhile by a flow racing this one (two tabs): that link decides.
      const winner = await identities.accountOf(claims);
      return winner === undefined ? { error: 'email_in_use' } : { userId: winner };
    };

    const existing = await users.findOne({ email }, { _id: 1, emailVerified: 1 }).lean();
    if (existing) {
      if (!claims.emailVerified) return { error: 'email_in_use' };
      const userId = existing._id.toHexString();
      if (existing.emailVerified !== true) await takeOver(userId);
      return link(userId);
    }
    try {
      const created = await users.create({ email, password: null, emailVerified: claims.emailVerified });
      return link(created._id.toHexString());
    } catch (err) {
      // Registered meanwhile, by another sign-in or a registration: decide again, once, against it.
      if (isDuplicateKey(err) && !retried) return signIn(claims, true);
      throw err;
    }
  }

  return { signIn };
}

export type AccountLinks = ReturnType<typeof createAccountLinks>;
