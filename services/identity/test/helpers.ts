import type { Bulkhead } from '@cs/koa';
import { overTheNetwork } from '@cs/lifecycle';
import { api, captureLogger, openTestDatabase, TEST_JWT_SECRET, type TestDatabase } from '@cs/testkit';
import { type UserModel, userModel } from '../src/accounts/model';
import { createApp } from '../src/app';
import type { AccountDeletions } from '../src/deletions/account-deletions';
import type { LoginThrottle } from '../src/login-defence/login-throttle';
import type { ProviderSettings } from '../src/oidc/provider-settings';
import { createMailer } from '../src/password-reset/mailer';

/** Nothing listens here: what identity sends to posts, notes and files is refused at once. */
const NOWHERE = 'http://127.0.0.1:9';

export const TEST_CONFIG = {
  JWT_SECRET: TEST_JWT_SECRET,
  JWT_EXPIRES_IN: '1h',
  BCRYPT_COST: 4,
  /** One password piece at once per core, as in production. */
  BCRYPT_CONCURRENCY: 0,
  PASSWORD_RESET_TTL: 30 * 60_000,
  EMAIL_TOKEN_TTL: 24 * 3600_000,
  EMAIL_RESEND_INTERVAL: 60_000,
  WEB_URL: 'http://localhost:3000',
  POSTS_URL: NOWHERE,
  NOTES_URL: NOWHERE,
  FILES_URL: NOWHERE,
  DELETION_TIMEOUT: 5_000,
  SESSION_IDLE_TTL: 14 * 24 * 3600_000,
  SESSION_MAX_AGE: 90 * 24 * 3600_000,
  REFRESH_GRACE: 10_000,
  /** Sign-in with providers: none unless a test names some (oidc-helpers.ts). */
  PUBLIC_URL: 'http://127.0.0.1:3000',
  FRONTEND_ORIGIN: [] as readonly string[],
  oidcProviders: [] as readonly ProviderSettings[],
  /** A provider that did not answer is tried again this often (ms). */
  OIDC_DISCOVERY_INTERVAL: 200,
  /** The test run's SMTP server (Mailpit, started by the test kit); '' for none. */
  SMTP_URL: process.env.SMTP_URL ?? '',
};

export interface IdentityHarness {
  app: Awaited<ReturnType<typeof createApp>>['app'];
  http: ReturnType<typeof api>;
  users: UserModel;
  throttle: LoginThrottle;
  deletions: AccountDeletions;
  /** The bcrypt bulkhead. */
  passwordWork: Bulkhead;
  db: TestDatabase;
  logs: ReturnType<typeof captureLogger>;
  /** A second replica of identity on the same database, as another process would be. */
  replica(): Promise<ReturnType<typeof api>>;
}

/** The identity app in-process, on a database of the calling test file's own. */
export async function startIdentity(file: string, config: Partial<typeof TEST_CONFIG> = {}): Promise<IdentityHarness> {
  const db = await openTestDatabase(file);
  const logs = captureLogger('identity');
  const settings = { ...TEST_CONFIG, ...config };
  const built = await identityOn(db.connection, settings, logs.logger);
  const replicas: Built[] = [built];
  const harness: IdentityHarness = {
    app: built.app,
    http: api(built.app.callback()),
    users: userModel(db.connection),
    throttle: built.throttle,
    deletions: built.deletions,
    passwordWork: built.passwordWork,
    logs,
    db: {
      ...db,
      // Each replica stops following the revocation log before the database goes.
      drop: async () => {
        for (const replica of replicas) {
          replica.following.stop();
          await replica.discovering();
        }
        await db.drop();
      },
    },
    replica: async () => {
      const other = await identityOn(db.connection, settings, logs.logger);
      replicas.push(other);
      return api(other.app.callback());
    },
  };
  return harness;
}

type App = Awaited<ReturnType<typeof createApp>>;
type Built = App & { following: ReturnType<App['followLog']>; discovering: () => Promise<void> };

/** One identity process's app on `connection`, following the revocation log, up to date with it. */
async function identityOn(
  connection: TestDatabase['connection'],
  settings: typeof TEST_CONFIG,
  logger: ReturnType<typeof captureLogger>['logger'],
): Promise<Built> {
  const mailer = createMailer(settings.SMTP_URL, 'Content Service <no-reply@content-service.invalid>');
  const app = await createApp({ config: settings, connection, logger, mailer, reach: overTheNetwork });
  const following = app.followLog();
  await following.caughtUp();
  const discovering = app.oidc.discover(settings.OIDC_DISCOVERY_INTERVAL, () => {});
  return { ...app, following, discovering };
}

let counter = 0;
/** A fresh address per call, so tests never collide. */
export function uniqueEmail(tag = 'user'): string {
  counter += 1;
  return `${tag}-${process.pid}-${Date.now()}-${counter}@example.com`;
}

export const TEST_PASSWORD = 'correct horse battery';

/** A registered account of its own: its address, token and id. */
export async function registered(
  h: IdentityHarness,
  tag: string,
): Promise<{ email: string; token: string; userId: string }> {
  const email = uniqueEmail(tag);
  const res = await h.http.post('/api/auth/register').send({ email, password: TEST_PASSWORD }).expect(201);
  const { id } = JSON.parse(Buffer.from(String(res.body.token).split('.')[1] ?? '', 'base64url').toString()) as {
    id: string;
  };
  return { email, token: res.body.token, userId: id };
}
