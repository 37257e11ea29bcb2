import { randomBytes } from 'node:crypto';
import { signToken, type TokenSettings } from '@cs/auth';
import { HttpError } from '@cs/errors';
import bcrypt from 'bcrypt';
import { type Credentials, checkNewCredentials, couldBeAccount, messages } from './credentials';
import type { LoginThrottle } from './login-throttle';
import type { UserModel } from './model';

export interface Accounts {
  register(credentials: Credentials): Promise<string>;
  /** `clientAddress` is where the attempt came from (the gateway says), for the login throttle. */
  login(credentials: Credentials, clientAddress: string): Promise<string>;
}

const DUPLICATE_KEY = 11000;

function isDuplicateKey(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === DUPLICATE_KEY;
}

/**
 * Register and log in. Hashing runs on the libuv pool (bcrypt's async API), never on the event
 * loop. Both return a signed token carrying only the user id.
 */
export function createAccounts({
  users,
  tokens,
  bcryptCost,
  throttle,
}: {
  users: UserModel;
  tokens: TokenSettings;
  bcryptCost: number;
  throttle: LoginThrottle;
}): Accounts {
  // An unknown e-mail still pays for one compare against a hash of the same cost, so the answer
  // takes as long as a wrong password does.
  const dummyHash = bcrypt.hash(randomBytes(16).toString('hex'), bcryptCost);

  return {
    async register(credentials) {
      checkNewCredentials(credentials);
      const { email, password } = credentials;
      if (await users.exists({ email })) throw new HttpError(400, messages.alreadyRegistered);
      const hash = await bcrypt.hash(password, bcryptCost);
      try {
        const user = await users.create({ email, password: hash });
        return signToken(user._id.toHexString(), tokens);
      } catch (err) {
        // Two registrations raced past the check above: the unique index decided.
        if (isDuplicateKey(err)) throw new HttpError(400, messages.alreadyRegistered, { cause: err });
        throw err;
      }
    },

    async login(credentials, clientAddress) {
      const { email, password } = credentials;
      // Nothing else can be an account, so nothing else is counted (or stored).
      const counted = couldBeAccount(credentials);
      if (counted) await throttle.check(email, clientAddress);
      const user = counted ? await users.findOne({ email }, { _id: 1, password: 1 }).select('+password').lean() : null;
      const matches = await bcrypt.compare(password, user?.password ?? (await dummyHash));
      if (!user || !matches) {
        if (counted) await throttle.failed(email, clientAddress);
        throw new HttpError(401, messages.invalidCredentials);
      }
      await throttle.succeeded(email, clientAddress);
      return signToken(user._id.toHexString(), tokens);
    },
  };
}
