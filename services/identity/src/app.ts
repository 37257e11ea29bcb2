import { availableParallelism } from 'node:os';
import { createTokenVerifier, followRevocations, RevocationList } from '@cs/auth';
import { parseDuration } from '@cs/config';
import { createBulkhead, createServiceApp } from '@cs/koa';
import type { ServiceReach } from '@cs/lifecycle';
import type { Logger } from '@cs/log';
import { type Connection, createTurns, isMongoReady } from '@cs/mongo';
import { createAccounts } from './accounts/accounts';
import { userModel } from './accounts/model';
import { createPasswordStore } from './accounts/password-store';
import { createProfiles } from './accounts/profiles';
import type { Config } from './config';
import { createAccountDeletions } from './deletions/account-deletions';
import { createEmailChanges } from './email/email-change';
import { emailRoutes, emailVerifiedRoute } from './email/email-routes';
import { createEmailVerifications } from './email/email-verification';
import { createKnownClients } from './login-defence/known-clients';
import { createLoginThrottle } from './login-defence/login-throttle';
import { createOidc } from './oidc/oidc';
import { oidcRoutes } from './oidc/oidc-routes';
import type { Mailer } from './password-reset/mailer';
import { createPasswordResets } from './password-reset/password-reset';
import { revocationModel } from './revocations/model';
import { createRevocationLog } from './revocations/revocation-log';
import { revocationRoutes } from './revocations/revocation-routes';
import { authRoutes, userRoutes } from './routes';
import { refreshTokenModel, sessionEndModel, sessionModel } from './sessions/model';
import { refreshCookies } from './sessions/refresh-cookie';
import { createRefreshLimit } from './sessions/refresh-limit';
import { createRefreshTokens } from './sessions/refresh-tokens';
import { createSessions } from './sessions/sessions';

export interface Deps {
  config: Pick<
    Config,
    | 'JWT_SECRET'
    | 'JWT_EXPIRES_IN'
    | 'BCRYPT_COST'
    | 'PASSWORD_RESET_TTL'
    | 'EMAIL_TOKEN_TTL'
    | 'EMAIL_RESEND_INTERVAL'
    | 'WEB_URL'
    | 'POSTS_URL'
    | 'NOTES_URL'
    | 'FILES_URL'
    | 'DELETION_TIMEOUT'
    | 'SESSION_IDLE_TTL'
    | 'SESSION_MAX_AGE'
    | 'REFRESH_GRACE'
    | 'PUBLIC_URL'
    | 'FRONTEND_ORIGIN'
    | 'oidcProviders'
  > &
    Partial<Pick<Config, 'BCRYPT_CONCURRENCY'>>;
  connection: Connection;
  logger: Logger;
  /** How e-mail goes out; none: password reset answers 503. */
  mailer: Mailer | undefined;
  /** How the services this one calls are reached: over the network, or in memory in one process. */
  reach: ServiceReach;
}

export async function createApp({ config, connection, logger, mailer, reach }: Deps) {
  const users = userModel(connection);
  const sessionRecords = sessionModel(connection);
  const sessionEnds = sessionEndModel(connection);
  const refreshTokenRecords = refreshTokenModel(connection);
  const revocationRecords = revocationModel(connection);
  // The unique indexes (e-mail, spent refresh tokens, a user's seconds) must exist before the first request.
  await Promise.all(
    [users, sessionRecords, sessionEnds, refreshTokenRecords, revocationRecords].map((model) => model.init()),
  );
  const tokens = { secret: config.JWT_SECRET, expiresIn: config.JWT_EXPIRES_IN };
  const expiresInS = Math.round(parseDuration(config.JWT_EXPIRES_IN) / 1000);
  const revocations = createRevocationLog(revocationRecords, { tokenLifetimeS: expiresInS });
  // Identity verifies tokens as every process does, from a list that follows its own log.
  const revoked = new RevocationList();
  const verifier = createTokenVerifier(config.JWT_SECRET, revoked);
  const sessions = createSessions({
    sessions: sessionRecords,
    ends: sessionEnds,
    revoked,
    refreshTokens: refreshTokenRecords,
    revocations,
    limit: createRefreshLimit(),
    keys: createRefreshTokens(config.JWT_SECRET),
    tokens,
    expiresInS,
    settings: { idleMs: config.SESSION_IDLE_TTL, maxAgeMs: config.SESSION_MAX_AGE, graceMs: config.REFRESH_GRACE },
  });
  const throttle = createLoginThrottle(connection);
  const turns = await createTurns(connection);
  const passwords = createPasswordStore({ users, turns });
  const oidc = await createOidc(
    { connection, users, sessions, turns, logger },
    {
      providers: config.oidcProviders,
      publicUrl: config.PUBLIC_URL,
      allowedOrigins: [...config.FRONTEND_ORIGIN, config.WEB_URL],
    },
  );
  const resets = createPasswordResets({
    connection,
    users,
    passwords,
    sessions,
    mailer,
    ttlMs: config.PASSWORD_RESET_TTL,
    webUrl: config.WEB_URL,
    bcryptCost: config.BCRYPT_COST,
    logger,
  });
  const mail = { connection, users, mailer, logger, webUrl: config.WEB_URL };
  const emailLinks = { ttlMs: config.EMAIL_TOKEN_TTL, paceMs: config.EMAIL_RESEND_INTERVAL };
  const verifications = createEmailVerifications({ ...mail, ...emailLinks });
  const deletions = createAccountDeletions({
    connection,
    users,
    // What identity keeps of a user besides the account: its reset and e-mail links, its sessions,
    // its identities at providers.
    forget: async (userId) => {
      await Promise.all([
        resets.forget(userId),
        sessions.forgetAll(userId),
        verifications.forget(userId),
        changes.forget(userId),
        oidc.forget(userId),
      ]);
    },
    owners: { posts: config.POSTS_URL, notes: config.NOTES_URL, files: config.FILES_URL },
    fetch: reach.fetch,
    secret: config.JWT_SECRET,
    timeoutMs: config.DELETION_TIMEOUT,
    logger,
  });
  const accounts = createAccounts({
    users,
    sessions,
    bcryptCost: config.BCRYPT_COST,
    throttle,
    deletions,
    passwords,
    retireResets: resets.retire,
    welcome: verifications.welcome,
  });
  const changes = createEmailChanges({
    ...mail,
    ...emailLinks,
    accounts,
    sessions,
    forgetLinks: async (userId) => {
      await Promise.all([resets.forget(userId), verifications.forget(userId)]);
    },
  });
  const profiles = createProfiles(users);
  // Device tokens' key comes from JWT_SECRET; their cookie is Secure when the web client is served over HTTPS.
  const known = createKnownClients({ secret: config.JWT_SECRET, secure: config.WEB_URL.startsWith('https:') });
  const passwordWork = bcryptBulkhead(config);
  // Secure when the web client is served over HTTPS; kept as long as a session may stay idle.
  const cookies = refreshCookies({
    secure: config.WEB_URL.startsWith('https:'),
    maxAgeS: Math.floor(config.SESSION_IDLE_TTL / 1000),
  });
  const app = createServiceApp({
    name: 'identity',
    logger,
    routers: [
      authRoutes(
        { accounts, resets, sessions, profiles },
        {
          tokens: verifier,
          bcrypt: passwordWork,
          known,
          cookies,
        },
      ),
      emailRoutes({ verifications, changes }, { tokens: verifier, bcrypt: passwordWork, known }),
      emailVerifiedRoute(verifications, config.JWT_SECRET),
      revocationRoutes(revocations),
      userRoutes(profiles),
      oidcRoutes(oidc.routes, { tokens: verifier, cookies }),
    ],
    readiness: { database: () => isMongoReady(connection) },
    tokens: verifier,
  });
  /** Starts following the revocation log; until the first read, protected routes answer 503. */
  const followLog = () => followRevocations(revoked, revocations.after, { logger });
  return { app, throttle, resets, verifications, changes, deletions, turns, passwordWork, followLog, sessions, oidc };
}

/**
 * bcrypt at the contract's cost takes about 0.2 s of a core: BCRYPT_CONCURRENCY (the cores, by
 * default) at once, 16 waiting per client address (an office behind one address logs in at nine)
 * and 32 per place in all; past that 429 or 503, before the account is looked up, so refusals say
 * nothing of which accounts exist.
 *
 * A piece may wait PASSWORD_WAIT_MS in line. Not the bulkheads' 5 s: a hash takes 1 to 2.5 s on a
 * busy two-core machine (a Compose redeploy, measured), so six logins at once, two at a time, had
 * the last one refused while the line was short. 10 s still answers before the gateway gives up
 * on the upstream (15 s); the line's length, not the wait, is what refuses a flood.
 */
const PASSWORD_WAIT_MS = 10_000;

export function bcryptBulkhead({ BCRYPT_CONCURRENCY }: Partial<Pick<Config, 'BCRYPT_CONCURRENCY'>>) {
  const concurrency = BCRYPT_CONCURRENCY || availableParallelism();
  return createBulkhead({
    name: 'password',
    concurrency,
    perClient: 16,
    total: 32 * concurrency,
    maxWaitMs: PASSWORD_WAIT_MS,
  });
}
