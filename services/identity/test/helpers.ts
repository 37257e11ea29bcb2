import { api, captureLogger, openTestDatabase, TEST_JWT_SECRET, type TestDatabase } from '@cs/testkit';
import { createApp } from '../src/app';
import type { LoginThrottle } from '../src/login-throttle';
import { type UserModel, userModel } from '../src/model';

export const TEST_CONFIG = { JWT_SECRET: TEST_JWT_SECRET, JWT_EXPIRES_IN: '1h', BCRYPT_COST: 4 };

export interface IdentityHarness {
  http: ReturnType<typeof api>;
  users: UserModel;
  throttle: LoginThrottle;
  db: TestDatabase;
  logs: ReturnType<typeof captureLogger>;
}

/** The identity app in-process, on a database of the calling test file's own. */
export async function startIdentity(file: string, config: Partial<typeof TEST_CONFIG> = {}): Promise<IdentityHarness> {
  const db = await openTestDatabase(file);
  const logs = captureLogger('identity');
  const { app, throttle } = await createApp({
    config: { ...TEST_CONFIG, ...config },
    connection: db.connection,
    logger: logs.logger,
  });
  return { http: api(app.callback()), users: userModel(db.connection), throttle, db, logs };
}

let counter = 0;
/** A fresh address per call, so tests never collide. */
export function uniqueEmail(tag = 'user'): string {
  counter += 1;
  return `${tag}-${process.pid}-${Date.now()}-${counter}@example.com`;
}
