/**
 * Identities at providers linked to accounts: an identity is the pair (issuer, `sub`), linked to one
 * account at most (a unique index decides between two links racing).
 */
import { oidcMessages } from '@cs/contract';
import { HttpError } from '@cs/errors';
import { claimedByInsert } from '@cs/mongo';
import { type IdentityModel, toObjectId } from './model';

/** One linked identity, as `GET /api/auth/identities` lists it. */
export interface LinkedIdentity {
  _id: string;
  provider: string;
  email: string | null;
  createdAt: Date;
}

export interface IdentityKey {
  issuer: string;
  subject: string;
}

export interface Identities {
  /** The account this identity is linked to, if any. */
  accountOf(key: IdentityKey): Promise<string | undefined>;
  /** Links the identity to `userId`; false when it is linked already (to whichever account won). */
  link(userId: string, key: IdentityKey & { provider: string; email: string | null }): Promise<boolean>;
  list(userId: string): Promise<LinkedIdentity[]>;
  /**
   * Unlinks one of `userId`'s identities: 404 for none of theirs, 409 when it is the last way to log
   * in (`hasPassword` false and no other identity).
   */
  unlink(userId: string, identityId: string, hasPassword: boolean): Promise<void>;
  /** Unlinks every identity of the account (a provider took it over; the account is deleted). */
  forget(userId: string): Promise<void>;
  /** An identity whose account is gone, left behind by a deletion under way. */
  drop(key: IdentityKey): Promise<void>;
}

export function createIdentities(identities: IdentityModel, now = Date.now): Identities {
  return {
    async accountOf({ issuer, subject }) {
      const found = await identities.findOne({ issuer, subject }, { userId: 1 }).lean();
      return found?.userId.toHexString();
    },

    link: (userId, { issuer, subject, provider, email }) =>
      claimedByInsert(() =>
        identities.create({ userId: toObjectId(userId), issuer, subject, provider, email, createdAt: new Date(now()) }),
      ),

    async list(userId) {
      const found = await identities
        .find({ userId: toObjectId(userId) }, { provider: 1, email: 1, createdAt: 1 })
        .sort({ createdAt: 1, _id: 1 })
        .lean();
      return found.map(({ _id, provider, email, createdAt }) => ({
        _id: _id.toHexString(),
        provider,
        email: email ?? null,
        createdAt,
      }));
    },

    async unlink(userId, identityId, hasPassword) {
      const owner = toObjectId(userId);
      const mine = await identities.find({ userId: owner }).lean();
      const unlinked = mine.find(({ _id }) => _id.toHexString() === identityId);
      if (!unlinked) throw new HttpError(404, oidcMessages.identityNotFound);
      const last = () => new HttpError(409, oidcMessages.lastWayToLogIn);
      if (!hasPassword && mine.length <= 1) throw last();
      await identities.deleteOne({ _id: unlinked._id, userId: owner });
      // Two unlinks at once (the account's last two identities) may both have counted two: the one
      // that finds none left puts its identity back, so the account never ends with no way in.
      if (!hasPassword && (await identities.countDocuments({ userId: owner })) === 0) {
        await claimedByInsert(() => identities.create(unlinked));
        throw last();
      }
    },

    async forget(userId) {
      await identities.deleteMany({ userId: toObjectId(userId) });
    },

    async drop({ issuer, subject }) {
      await identities.deleteOne({ issuer, subject });
    },
  };
}
