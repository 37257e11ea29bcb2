import { randomBytes } from 'node:crypto';
import { HttpError, messages as httpMessages } from '@cs/errors';
import { isDuplicateKey } from '@cs/mongo';
import bcrypt from 'bcrypt';
import type { AccountDeletions } from '../deletions/account-deletions';
import type { LoginThrottle } from '../login-defence/login-throttle';
import type { Sessions, SignedIn } from '../sessions/sessions';
import { createCompareClock } from './compare-clock';
import { type Credentials, couldBeAccount, fitsBcrypt, messages } from './credentials';
import type { UserModel } from './model';
import type { PasswordStore } from './password-store';

/**
 * Runs a request's password work in its client's turn of the bcrypt bulkhead (routes.ts): the
 * lookups that lead to the hash, and the hash. The writes that follow (the session, the new
 * password) run after the place is given back, so a slow database never holds up hashing.
 * `trustedFor`: the work of a trusted device's login to this account (device-tokens.ts) takes the
 * priority line, in that account's turn.
 */
export type PasswordTurn = <T>(work: () => Promise<T>, options?: { trustedFor?: string }) => Promise<T>;

/**
 * Where a request came from: the client address (the gateway says), its User-Agent, its turn, and
 * on a login the device its device token proves for the account it names (known-clients.ts).
 */
export interface Client {
  address: string;
  userAgent: string | undefined;
  passwordTurn: PasswordTurn;
  device?: string;
}

export interface Account {
  _id: string;
  email: string;
  displayName: string | null;
  emailVerified: boolean;
  createdAt: Date;
}

/**
 * How the caller of a route that asks for the current password proves it is the owner: the
 * password, or, for an account that has none (made by a provider's sign-in), a session that began
 * with a sign-in less than FRESH_SIGN_IN_MS ago. The access token's second names its session.
 */
export interface Proof {
  password: string;
  /** The caller's access token's `iat`, in seconds. */
  issuedAt: number;
}

/** How recent a sign-in stands in for the password of an account that has none. */
export const FRESH_SIGN_IN_MS = 5 * 60_000;

export interface Accounts {
  /** A new account, and its first session. */
  register(credentials: Credentials, client: Client, displayName?: string | null): Promise<SignedIn>;
  /** A new session; the client's address counts for the login throttle. */
  login(credentials: Credentials, client: Client): Promise<SignedIn>;
  /**
   * Sets a new password when the current one is right. Every session of the account ends; the
   * answer is a new one for the caller.
   */
  changePassword(userId: string, change: { proof: Proof; newPassword: string }, client: Client): Promise<SignedIn>;
  /** Deletes the account when the proof holds, ends its sessions, and records the deletion of its data. */
  deleteAccount(userId: string, proof: Proof, client: Client): Promise<void>;
  /**
   * The caller's password checked as a login's is (and counted by the same throttle, so a stolen
   * token cannot guess it faster), or its fresh sign-in when the account has none; 401 otherwise,
   * or when the account is gone. Returns the version of the password it checked. In the caller's
   * password turn.
   */
  confirmOwner(userId: string, proof: Proof, client: Client): Promise<number>;
  /** The caller's account; 401 when it is gone. */
  me(userId: string): Promise<Account>;
}

/**
 * Register and log in. Hashing runs on the libuv pool (bcrypt's async API), never on the event
 * loop. Both start a session (sessions.ts): its access token carries only the user id.
 */
export function createAccounts({
  users,
  sessions,
  bcryptCost,
  throttle,
  deletions,
  passwords,
  retireResets,
  welcome,
  now = Date.now,
}: {
  users: UserModel;
  sessions: Sessions;
  now?: () => number;
  bcryptCost: number;
  throttle: LoginThrottle;
  deletions: AccountDeletions;
  passwords: PasswordStore;
  /** After a successful login: the account's outstanding reset token stops working. */
  retireResets: (userId: string) => Promise<void>;
  /** After a registration: the first link to verify the address, sent without waiting for it. */
  welcome: (userId: string, email: string) => void;
}): Accounts {
  // An unknown e-mail waits as long as a compare takes (compare-clock.ts), so the answer takes as
  // long as a wrong password's; the clock's first measure is against a hash of the same cost.
  const dummyHash = bcrypt.hash(randomBytes(16).toString('hex'), bcryptCost);
  const compareClock = createCompareClock(async () => bcrypt.compare('', await dummyHash));

  return {
    // Credentials and new passwords have met their schema's rules at the route (@cs/contract).
    async register({ email, password }, client, displayName = null) {
      const hash = await client.passwordTurn(async () => {
        if (await users.exists({ email })) throw new HttpError(400, messages.alreadyRegistered);
        return bcrypt.hash(password, bcryptCost);
      });
      let userId: string;
      try {
        userId = (await users.create({ email, password: hash, displayName }))._id.toHexString();
      } catch (err) {
        // Two registrations raced past the check above: the unique index decided.
        if (isDuplicateKey(err)) throw new HttpError(400, messages.alreadyRegistered, { cause: err });
        throw err;
      }
      const session = await sessions.start(userId, client.userAgent);
      welcome(userId, email);
      return { ...session, emailVerified: false };
    },

    async login(credentials, { address: clientAddress, userAgent, passwordTurn, device }) {
      const { email, password } = credentials;
      // Nothing else can be an account, so nothing else is counted (or stored).
      const counted = couldBeAccount(credentials);
      // A device that logged in to this account before, and has not failed too often since, goes
      // ahead of the crowd and is not slowed by others' failures (device-tokens.ts). Only a token
      // whose MAC holds for this account costs this lookup.
      const trusted = counted && device !== undefined && (await throttle.trusts(device));
      const { user, matches } = await passwordTurn(
        async () => {
          if (counted) await throttle.check(email, clientAddress, trusted);
          const user = counted
            ? await users.findOne({ email }, { _id: 1, password: 1, emailVerified: 1 }).select('+password').lean()
            : null;
          // An account without a password answers as a wrong password does, in the same time.
          const hash = user?.password;
          if (!user || !hash) {
            await compareClock.wait();
            return { user, matches: false };
          }
          return { user, matches: await compareClock.timed(() => bcrypt.compare(password, hash)) };
        },
        trusted ? { trustedFor: email } : undefined,
      );
      if (!user || !matches) {
        if (counted) await throttle.failed(email, clientAddress, device);
        throw new HttpError(401, messages.invalidCredentials);
      }
      await throttle.succeeded(email, clientAddress);
      // Whoever can log in has no need of a reset link: one sent before (stolen, perhaps) stops working.
      await retireResets(user._id.toHexString());
      return {
        ...(await sessions.start(user._id.toHexString(), userAgent)),
        emailVerified: user.emailVerified === true,
      };
    },

    async changePassword(userId, { proof, newPassword }, client) {
      const { checked, hash, emailVerified } = await client.passwordTurn(async () => {
        const { version: checked, emailVerified } = await confirmOwner(userId, proof, client.address);
        return { checked, hash: await bcrypt.hash(newPassword, bcryptCost), emailVerified };
      });
      // Written only while the hash just compared is still the current one: of two changes (or a
      // change and a reset) that checked it, the other one is refused. Reset tokens sent before
      // were bound to that version, so they stop working too.
      const changedSince = () => new HttpError(401, messages.invalidCredentials);
      await passwords.write(userId, { checked, hash, refused: changedSince });
      await sessions.endAll(userId);
      return { ...(await sessions.start(userId, client.userAgent)), emailVerified };
    },

    async deleteAccount(userId, proof, client) {
      await client.passwordTurn(() => confirmOwner(userId, proof, client.address));
      // The event first: once it is recorded, the deletion is finished whatever happens next.
      await deletions.record(userId);
      // Its sessions end before the account goes: a process that dies in between leaves the
      // deletion to its outbox, which deletes the account, and no session to refresh.
      await sessions.endAll(userId);
      await users.deleteOne({ _id: userId });
      deletions.deliverSoon(userId);
    },

    async me(userId) {
      const user = await users.findById(userId, { email: 1, displayName: 1, emailVerified: 1, createdAt: 1 }).lean();
      if (!user) throw new HttpError(401, httpMessages.invalidToken);
      return {
        _id: user._id.toHexString(),
        email: user.email,
        displayName: user.displayName ?? null,
        emailVerified: user.emailVerified === true,
        createdAt: user.createdAt,
      };
    },

    async confirmOwner(userId, proof, client) {
      return client.passwordTurn(async () => (await confirmOwner(userId, proof, client.address)).version);
    },
  };

  /** confirmOwner's work, in a turn already; also says whether the address is verified. */
  async function confirmOwner(
    userId: string,
    { password, issuedAt }: Proof,
    clientAddress: string,
  ): Promise<{ version: number; emailVerified: boolean }> {
    const user = await users
      .findById(userId, { email: 1, password: 1, version: 1, emailVerified: 1 })
      .select('+password')
      .lean();
    if (!user) throw new HttpError(401, httpMessages.invalidToken);
    const proven = { version: user.version ?? 0, emailVerified: user.emailVerified === true };
    const hash = user.password;
    if (!hash) {
      // No password to check: the sign-in behind the caller's token must be recent. Its session's
      // start is the sign-in; a refresh makes a new token, never a new sign-in.
      const signedInAt = await sessions.signedInAt(userId, issuedAt);
      if (signedInAt === undefined || now() - signedInAt.getTime() > FRESH_SIGN_IN_MS) {
        throw new HttpError(401, messages.freshSignInRequired);
      }
      return proven;
    }
    await throttle.check(user.email, clientAddress);
    const matches = fitsBcrypt(password) && (await bcrypt.compare(password, hash));
    if (!matches) {
      await throttle.failed(user.email, clientAddress);
      throw new HttpError(401, messages.invalidCredentials);
    }
    return proven;
  }
}
