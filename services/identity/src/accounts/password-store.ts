/**
 * Writing a password, conditional on the version of it that the caller checked: the one whose
 * hash a change compared the current password with, or the one a reset link was sent under. Each
 * write is the account's next version, taken as a turn (`@cs/mongo` turns): of two writes that
 * checked the same version, one takes it, and the other finds the version moved on and is refused.
 * A filtered update alone would let both "win" on FerretDB, which does not make them atomic.
 */
import type { Turns } from '@cs/mongo';
import type { UserModel, UserRecord } from './model';

export interface PasswordWrite {
  /** The version the caller checked: the write happens only while it is still the current one. */
  checked: number;
  /** The new bcrypt hash. */
  hash: string;
  /** The error when the account is gone or its password changed since it was checked. */
  refused: () => Error;
}

export interface PasswordStore {
  write(userId: string, change: PasswordWrite): Promise<void>;
}

export function createPasswordStore({ users, turns }: { users: UserModel; turns: Turns }): PasswordStore {
  return {
    async write(userId, { checked, hash, refused }) {
      await turns.writeInTurn(`user:${userId}`, {
        read: () => users.findById(userId, { version: 1 }).lean<Pick<UserRecord, '_id' | 'version'>>(),
        check: (user) => {
          if ((user.version ?? 0) !== checked) throw refused();
        },
        write: async (user, version) => {
          const { matchedCount } = await users.updateOne(
            { _id: userId, version: user.version ?? null },
            { $set: { password: hash, version } },
          );
          return matchedCount > 0 ? true : null;
        },
        missing: refused,
        busy: refused,
      });
    },
  };
}
