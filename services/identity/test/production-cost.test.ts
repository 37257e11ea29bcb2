import { overTheNetwork } from '@cs/lifecycle';
import { api, captureLogger, openTestDatabase, TEST_JWT_SECRET, type TestDatabase, testDatabaseUrl } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { userModel } from '../src/accounts/model';
import { createApp } from '../src/app';
import { readConfig } from '../src/config';

let db: TestDatabase;

beforeAll(async () => {
  db = await openTestDatabase(__filename);
});
afterAll(async () => {
  await db.drop();
});

describe('the production bcrypt cost', () => {
  it('when BCRYPT_COST is not configured, then passwords are hashed at cost 12', async () => {
    const config = readConfig({ JWT_SECRET: TEST_JWT_SECRET, MONGO_URL: testDatabaseUrl(__filename) });
    expect(config.BCRYPT_COST).toBe(12);

    const { app } = await createApp({
      config,
      connection: db.connection,
      logger: captureLogger().logger,
      mailer: undefined,
      reach: overTheNetwork,
    });
    await api(app.callback())
      .post('/api/auth/register')
      .send({ email: 'cost@example.com', password: 'password-12' })
      .expect(201);

    const user = await userModel(db.connection).findOne({ email: 'cost@example.com' }).select('+password').lean();
    expect(user?.password?.startsWith('$2b$12$')).toBe(true);
  });
});
