import { type ConfigOf, env, jwtSpec, partSpec, readEnvConfig } from '@cs/config';
import { type ProviderSettings, readProviderSettings } from './oidc/provider-settings';

export const configSpec = {
  ...jwtSpec,
  ...partSpec(4001),
  MONGO_URL: env.url(),
  /** A session ends this long after its last refresh (sessions.ts). */
  SESSION_IDLE_TTL: env.durationMs('14d'),
  /** A session ends this long after its login, however often it is refreshed. */
  SESSION_MAX_AGE: env.durationMs('90d'),
  /** How long a spent refresh token still answers the pair it was spent for (two tabs, a retry). */
  REFRESH_GRACE: env.durationMs('10s'),
  /** The contract's cost factor is 12; only tests lower it, and only through this key. */
  BCRYPT_COST: env.int(12, { min: 4, max: 15 }),
  /** Password hashes and compares at once (0: one per core); the rest wait their address's turn. */
  BCRYPT_CONCURRENCY: env.int(0, { min: 0, max: 64 }),
  /** `smtp://host:port` (or `smtps://user:pass@host:port`); empty: no e-mail, and reset answers 503. */
  SMTP_URL: env.string(''),
  MAIL_FROM: env.string('Content Service <no-reply@content-service.invalid>'),
  /** How long a password-reset link works. */
  PASSWORD_RESET_TTL: env.durationMs('30m'),
  /** How long a link to verify an address, or to confirm a change of address, works (email/). */
  EMAIL_TOKEN_TTL: env.durationMs('24h'),
  /**
   * How long an account waits between two mails of one kind (a verification link, an address
   * change's mails), counted from the last one; 0: no wait (the auth rate limit still bounds them).
   */
  EMAIL_RESEND_INTERVAL: env.durationMs('1m', { allowZero: true }),
  /** The web client's public address: reset e-mails link to its "Set a new password" screen. */
  WEB_URL: env.url('http://localhost:3000'),
  /** The services that own an account's data, told when it is deleted. */
  POSTS_URL: env.url('http://127.0.0.1:4002'),
  NOTES_URL: env.url('http://127.0.0.1:4003'),
  FILES_URL: env.url('http://127.0.0.1:4004'),
  /** How often deletions not yet confirmed by every owner are delivered again. */
  DELETION_OUTBOX_INTERVAL: env.durationMs('5s'),
  /** How long an owner may take to confirm a deletion before the attempt counts as failed. */
  DELETION_TIMEOUT: env.durationMs('30s'),

  // Sign-in with OpenID Connect providers (oidc/). The providers themselves are read from their
  // OIDC_<NAME>_ keys (oidc/provider-settings.ts), into `oidcProviders`.
  /** The gateway's public origin: providers send the browser back to `<PUBLIC_URL>/api/auth/oidc/<name>/callback`. */
  PUBLIC_URL: env.url('http://localhost:3000'),
  /** The web pages a sign-in may end on (with WEB_URL): a `redirect` elsewhere is refused, so none is open. */
  FRONTEND_ORIGIN: env.list([]),
  /** The providers' names, `acme,corp`: 1 to 20 of `[a-z0-9]` each. None by default. */
  OIDC_PROVIDERS: env.list([]),
  /** How often a provider whose discovery failed is tried again; it is left out of the list until then. */
  OIDC_DISCOVERY_INTERVAL: env.durationMs('10s'),
};

export type Config = ConfigOf<typeof configSpec> & { readonly oidcProviders: readonly ProviderSettings[] };

/** The only reader of process.env here (through readEnvConfig); tests pass their own source. */
export function readConfig(source: NodeJS.ProcessEnv = process.env): Config {
  const config = readEnvConfig(configSpec, source);
  return Object.freeze({
    ...config,
    oidcProviders: readProviderSettings(config.OIDC_PROVIDERS, source, config.PUBLIC_URL),
  });
}
