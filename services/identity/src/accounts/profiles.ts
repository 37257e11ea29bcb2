/**
 * What others may know of an account: its display name, which its owner sets, changes or clears,
 * and which anyone may read by account id, many at once (a page of posts names its authors in one
 * request). An address is never part of it.
 */

import { LIMITS, USER_IDS_PATTERN } from '@cs/contract';
import { HttpError, messages as httpMessages } from '@cs/errors';
import { trusted } from '@cs/mongo';
import type { UserModel } from './model';

export interface PublicProfile {
  _id: string;
  displayName: string | null;
}

const USER_IDS = new RegExp(USER_IDS_PATTERN);

export const profileMessages = {
  badIds: `ids must be 1 to ${LIMITS.userIdsMax} account ids, comma-separated`,
} as const;

/** `displayName` as its schema passed it (DISPLAY_NAME_PATTERN): stored trimmed. */
export function toDisplayName(value: unknown): string | null {
  return typeof value === 'string' ? value.trim() : null;
}

/** `ids=a,b,c` → the distinct ids, or a 400: at most LIMITS.userIdsMax, each an account id. */
export function toUserIds(query: unknown): string[] {
  if (typeof query !== 'string' || !USER_IDS.test(query)) throw new HttpError(400, profileMessages.badIds);
  const ids = [...new Set(query.split(',').map((id) => id.trim().toLowerCase()))];
  if (ids.length > LIMITS.userIdsMax) {
    throw new HttpError(400, profileMessages.badIds);
  }
  return ids;
}

export function createProfiles(users: UserModel) {
  return {
    /** Sets (or, with null, clears) the caller's display name; 401 when the account is gone. */
    async rename(userId: string, displayName: string | null): Promise<void> {
      const { matchedCount } = await users.updateOne({ _id: userId }, { $set: { displayName } });
      if (matchedCount === 0) throw new HttpError(401, httpMessages.invalidToken);
    },

    /** The profiles of the accounts among `ids` that exist; unknown ids are left out. */
    async named(ids: readonly string[]): Promise<PublicProfile[]> {
      const found = await users
        .find({ _id: trusted({ $in: ids }) }, { displayName: 1 })
        .lean<{ _id: { toHexString(): string }; displayName?: string | null }[]>();
      return found.map((user) => ({ _id: user._id.toHexString(), displayName: user.displayName ?? null }));
    },
  };
}

export type Profiles = ReturnType<typeof createProfiles>;
