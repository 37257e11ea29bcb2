/**
 * What a register or login body must hold before anything reaches a query: two strings. Objects
 * such as `{"$gt": ""}`, arrays and numbers are refused here, so no operator can be injected.
 */
import { HttpError } from '@cs/errors';

export const messages = {
  required: 'Email and password are required',
  notStrings: 'Email and password must be strings',
  badEmail: 'Email must be a valid address of at most 254 characters',
  shortPassword: 'Password must be at least 8 characters',
  longPassword: 'Password must be at most 72 bytes',
  alreadyRegistered: 'Email is already registered',
  invalidCredentials: 'Invalid credentials',
  registrationFailed: 'Registration failed',
  loginFailed: 'Login failed',
  passwordChangeRequired: 'currentPassword and newPassword are required',
  passwordChangeNotStrings: 'currentPassword and newPassword must be strings',
  passwordChangeFailed: 'Password change failed',
  passwordRequired: 'Password is required',
  passwordNotString: 'Password must be a string',
  accountDeletionFailed: 'Account deletion failed',
  emailRequired: 'Email is required',
  emailNotString: 'Email must be a string',
  resetAccepted: 'If an account exists for that address, an e-mail with a link to set a new password is on its way',
  resetUnavailable: 'Password reset by e-mail is not available',
  resetRequired: 'token and newPassword are required',
  resetNotStrings: 'token and newPassword must be strings',
  invalidResetToken: 'Invalid or expired reset token',
  resetFailed: 'Password reset failed',
} as const;

export const EMAIL_MAX = 254;
export const PASSWORD_MIN_CHARS = 8;
/** bcrypt ignores everything after 72 bytes, so longer passwords would silently be cut. */
export const PASSWORD_MAX_BYTES = 72;

export interface Credentials {
  /** Trimmed and lowercased: addresses differing only in case are one account. */
  email: string;
  password: string;
}

const EMAIL_SHAPE = /^[^\s@]+@[^\s@]+$/;

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** Presence and types, shared by register and login. */
export function readCredentials(body: Record<string, unknown>): Credentials {
  const { email, password } = readStrings(body, ['email', 'password'], messages);
  const normalized = normalizeEmail(email);
  if (normalized === '') throw new HttpError(400, messages.required);
  return { email: normalized, password };
}

/** The rules a new account must meet (`credentialsSchema` in libs/contract, served at /openapi.json). */
export function checkNewCredentials({ email, password }: Credentials): void {
  checkEmail(email);
  checkNewPassword(password);
}

export function checkEmail(email: string): void {
  if (email.length > EMAIL_MAX || !EMAIL_SHAPE.test(email)) throw new HttpError(400, messages.badEmail);
}

/** The rules every new password meets, at register, change and reset alike. */
export function checkNewPassword(password: string): void {
  if ([...password].length < PASSWORD_MIN_CHARS) throw new HttpError(400, messages.shortPassword);
  if (Buffer.byteLength(password, 'utf8') > PASSWORD_MAX_BYTES) throw new HttpError(400, messages.longPassword);
}

/**
 * String fields a body must hold, all present and non-empty (`required` otherwise) and all strings
 * (`notStrings` otherwise): nothing else ever reaches a query or bcrypt.
 */
export function readStrings<K extends string>(
  body: Record<string, unknown>,
  keys: readonly K[],
  { required, notStrings }: { required: string; notStrings: string },
): Record<K, string> {
  const values = keys.map((k) => body[k]);
  if (values.some((v) => v === undefined || v === null || v === '')) throw new HttpError(400, required);
  if (values.some((v) => typeof v !== 'string')) throw new HttpError(400, notStrings);
  return Object.fromEntries(keys.map((k) => [k, body[k]])) as Record<K, string>;
}

/** Whether an account could exist with these credentials at all (login never says which failed). */
export function couldBeAccount({ email, password }: Credentials): boolean {
  return (
    email.length <= EMAIL_MAX && EMAIL_SHAPE.test(email) && Buffer.byteLength(password, 'utf8') <= PASSWORD_MAX_BYTES
  );
}
