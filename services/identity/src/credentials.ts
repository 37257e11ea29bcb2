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
  const { email, password } = body;
  if (
    email === undefined ||
    email === null ||
    password === undefined ||
    password === null ||
    email === '' ||
    password === ''
  ) {
    throw new HttpError(400, messages.required);
  }
  if (typeof email !== 'string' || typeof password !== 'string') throw new HttpError(400, messages.notStrings);
  const normalized = normalizeEmail(email);
  if (normalized === '') throw new HttpError(400, messages.required);
  return { email: normalized, password };
}

/** The rules a new account must meet (DESIGN.md). */
export function checkNewCredentials({ email, password }: Credentials): void {
  if (email.length > EMAIL_MAX || !EMAIL_SHAPE.test(email)) throw new HttpError(400, messages.badEmail);
  if ([...password].length < PASSWORD_MIN_CHARS) throw new HttpError(400, messages.shortPassword);
  if (Buffer.byteLength(password, 'utf8') > PASSWORD_MAX_BYTES) throw new HttpError(400, messages.longPassword);
}

/** Whether an account could exist with these credentials at all (login never says which failed). */
export function couldBeAccount({ email, password }: Credentials): boolean {
  return (
    email.length <= EMAIL_MAX && EMAIL_SHAPE.test(email) && Buffer.byteLength(password, 'utf8') <= PASSWORD_MAX_BYTES
  );
}
