/**
 * What a register or login body holds once its schema (`@cs/contract`) passed it: two strings, so
 * no object such as `{"$gt": ""}` ever reaches a query. The rules and their messages are the
 * schema's; identity's own messages are the ones its operations give.
 */
import { credentialMessages, EMAIL_PATTERN, LIMITS } from '@cs/contract';

export const messages = {
  ...credentialMessages,
  alreadyRegistered: 'Email is already registered',
  invalidCredentials: 'Invalid credentials',
  registrationFailed: 'Registration failed',
  loginFailed: 'Login failed',
  passwordChangeFailed: 'Password change failed',
  accountDeletionFailed: 'Account deletion failed',
  resetAccepted: 'If an account exists for that address, an e-mail with a link to set a new password is on its way',
  resetUnavailable: 'Password reset by e-mail is not available',
  invalidResetToken: 'Invalid or expired reset token',
  resetFailed: 'Password reset failed',
  refreshFailed: 'Refresh failed',
  logoutFailed: 'Logout failed',
  sessionsFailed: 'Could not read or end sessions',
  meFailed: 'Could not read the account',
  usersFailed: 'Could not read the accounts',
  freshSignInRequired:
    'This account has no password: sign in again with its provider, then retry within 5 minutes of signing in',
} as const;

export interface Credentials {
  /** Trimmed and lowercased: addresses differing only in case are one account. */
  email: string;
  password: string;
}

const EMAIL = new RegExp(EMAIL_PATTERN, 'u');

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** After the schema: the address normalized. */
export function toCredentials(body: Record<string, unknown>): Credentials {
  return { email: normalizeEmail(body.email as string), password: body.password as string };
}

/** Whether a password fits bcrypt, which would silently cut a longer one. */
export function fitsBcrypt(password: string): boolean {
  return Buffer.byteLength(password, 'utf8') <= LIMITS.passwordMaxBytes;
}

/** Whether a normalized address is one an account may have, by register's rules. */
export function isAddress(address: string): boolean {
  return address.length <= LIMITS.emailMax && EMAIL.test(address) && address.isWellFormed();
}

/** Whether an account could exist with these credentials at all, by register's rules (login never says which failed). */
export function couldBeAccount({ email, password }: Credentials): boolean {
  return isAddress(email) && fitsBcrypt(password);
}
