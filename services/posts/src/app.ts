import { type AppMiddleware, createServiceApp } from '@cs/koa';
import type { Logger } from '@cs/log';
import { type Connection, createTurns, isMongoReady } from '@cs/mongo';
import type { Config } from './config';
import { postModel } from './model';
import { createPosts } from './posts';
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
  const app = createServiceApp({
    logger,
    routers: [postRoutes(createPosts(model, turns), { secret: config.JWT_SECRET, authenticate })],
    readiness: { database: () => isMongoReady(connection) },
  });
  return { app, turns };
}
