/**
 * The baseline for authentication cost: the same posts service and the same gateway, built from
 * their own createApp/createGateway, but with token verification replaced by a decode. For the
 * benchmark only; the servers have no configuration that does this. argv: posts | gateway.
 */
import { type ConfigOf, env, jwtSpec, loadConfig } from '@cs/config';
import { createGateway } from '@cs/gateway/dist/src/app';
import { readConfig as readGatewayConfig } from '@cs/gateway/dist/src/config';
import { runServer } from '@cs/lifecycle';
import { createLogger } from '@cs/log';
import { connectMongo } from '@cs/mongo';
import { createApp as createPostsApp } from '@cs/posts/dist/src/app';
import jwt from 'jsonwebtoken';

async function main(): Promise<void> {
  const role = process.argv[2];
  const logger = createLogger({ name: `unverified-${role}`, level: 'warn' });
  if (role === 'posts') {
    const config: ConfigOf<typeof spec> = loadConfig(spec, process.env);
    const connection = await connectMongo(config.MONGO_URL);
    const { app } = await createPostsApp({
      config,
      connection,
      logger,
      authenticate: async function decodeOnly(ctx, next) {
        const token = String(ctx.headers.authorization ?? '').slice('Bearer '.length);
        ctx.state.userId = (jwt.decode(token) as { id: string }).id;
        await next();
      },
    });
    await runServer({ app, port: config.PORT, logger });
  } else {
    const config = readGatewayConfig(process.env);
    const app = createGateway(config, logger, { verifyTokens: false });
    await runServer({ app: { callback: () => app }, port: config.PORT, logger });
  }
}

const spec = { ...jwtSpec, PORT: env.port(), MONGO_URL: env.url() };
void main();
