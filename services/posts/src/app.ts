import { type AppMiddleware, createServiceApp, deletedAccountRoutes } from '@cs/koa';
import type { Logger } from '@cs/log';
import { type Connection, createDeletedAccounts, createTurns, isMongoReady } from '@cs/mongo';
import type { Config } from './config';
import { postModel } from './model';
import { createPageCache } from './page-cache';
import { createPosts, pageSize } from './posts';
import { postRoutes } from './routes';

export interface Deps {
  config: Pick<Config, 'JWT_SECRET'>;
  connection: Connection;
  logger: Logger;
  /** See PostRouteOptions.authenticate: for the benchmark's baseline only. */
  authenticate?: AppMiddleware;
}

export async function createApp({ config, connection, logger, authenticate }: Deps) {
  const model = postModel(connection);
  await model.init();
  const turns = await createTurns(connection);
  const posts = createPosts(model, turns, createPageCache(connection, pageSize));
  const accounts = createDeletedAccounts(connection, (userId) => posts.removeAllBy(userId));
  const secret = config.JWT_SECRET;
  const app = createServiceApp({
    logger,
    routers: [postRoutes(posts, { secret, authenticate, accounts }), deletedAccountRoutes(accounts, { secret })],
    readiness: { database: () => isMongoReady(connection) },
  });
  return { app, turns, accounts };
}
