import { createServiceApp } from '@cs/koa';
import type { Logger } from '@cs/log';
import { type Connection, isMongoReady } from '@cs/mongo';
import { createAccounts } from './accounts';
import type { Config } from './config';
import { createLoginThrottle } from './login-throttle';
import { userModel } from './model';
import { authRoutes } from './routes';

export interface Deps {
  config: Pick<Config, 'JWT_SECRET' | 'JWT_EXPIRES_IN' | 'BCRYPT_COST'>;
  connection: Connection;
  logger: Logger;
}

export async function createApp({ config, connection, logger }: Deps) {
  const users = userModel(connection);
  await users.init(); // the unique e-mail index must exist before the first registration
  const throttle = createLoginThrottle(connection);
  const accounts = createAccounts({
    users,
    tokens: { secret: config.JWT_SECRET, expiresIn: config.JWT_EXPIRES_IN },
    bcryptCost: config.BCRYPT_COST,
    throttle,
  });
  const app = createServiceApp({
    logger,
    routers: [authRoutes(accounts)],
    readiness: { database: () => isMongoReady(connection) },
  });
  return { app, throttle };
}
