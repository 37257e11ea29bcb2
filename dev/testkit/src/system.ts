import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { type RunningSystem, type SystemOptions, startSystem } from '@cs/devstack';
import { TEST_FRONTEND_ORIGIN, TEST_JWT_SECRET } from './constants';
import { testStorageSettings } from './database';

/**
 * The whole system as real processes, on the test run's servers, with databases of its own.
 * For gateway and end-to-end suites; service suites drive their app in-process instead.
 * Like `npm start`, the gateway and every service run in one process (SERVICES=all), unless the
 * test asks for replicas or a balancer, or for `oneProcess: false`; `TEST_SERVICES=split` runs
 * every suite with one process each, as Compose does.
 * Identity sends its e-mail to the test run's SMTP server (read it with `waitForMail`); pass
 * `smtpUrl: undefined` for a system without one.
 */
export async function startTestSystem(overrides: Partial<SystemOptions> = {}): Promise<RunningSystem> {
  const id = randomBytes(3).toString('hex');
  return startSystem({
    dataDir: join(process.env.TEST_DATA_DIR ?? '.data/test', `system-${id}`),
    mongoUrl: process.env.MONGO_URL ?? '',
    storage: testStorageSettings(),
    jwtSecret: TEST_JWT_SECRET,
    dbPrefix: `s${id}_`,
    frontendOrigin: TEST_FRONTEND_ORIGIN,
    smtpUrl: process.env.SMTP_URL,
    ...(process.env.TEST_SERVICES === 'split' ? { oneProcess: false } : {}),
    env: { LOG_LEVEL: 'warn', BCRYPT_COST: '4', ...overrides.env },
    ...Object.fromEntries(Object.entries(overrides).filter(([k]) => k !== 'env')),
  });
}
