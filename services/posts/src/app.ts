import type { TokenVerifier } from '@cs/auth';
import type { EventBus } from '@cs/event-bus';
import { createBulkhead, createServiceApp, deletedAccountRoutes, writeBulkhead } from '@cs/koa';
import type { Logger } from '@cs/log';
import { type Connection, createDeletedAccounts, createTurns, isMongoReady } from '@cs/mongo';
import type { Config } from './config';
import { createListing } from './listing';
import { postEventModel, postModel } from './model';
import { createPostEvents } from './post-events';
import { createPosts } from './posts';
import { createPublicChanges } from './public-changes';
import { postRoutes } from './routes';

export interface Deps {
  config: Pick<Config, 'JWT_SECRET'> &
    Partial<Pick<Config, 'LIST_COLD_CONCURRENCY' | 'PUBLIC_CHANGES_PER_MINUTE' | 'WRITE_CONCURRENCY'>>;
  connection: Connection;
  logger: Logger;
  /** How tokens are verified: the signature, and the revocation list that follows identity's log. */
  tokens: TokenVerifier;
  /** Where the change events go (the realtime service's streams). */
  bus: EventBus;
}

export async function createApp({ config, connection, logger, tokens, bus }: Deps) {
  const model = postModel(connection);
  const eventEntries = postEventModel(connection);
  await Promise.all([model.init(), eventEntries.init()]);
  const turns = await createTurns(connection);
  const events = createPostEvents({ entries: eventEntries, posts: model, bus, logger });
  const posts = createPosts(model, turns, {
    listing: createListing(model, coldListBulkhead(config)),
    events,
    publicChanges: createPublicChanges(config),
  });
  const accounts = await createDeletedAccounts(connection, (userId) => posts.removeAllBy(userId));
  const secret = config.JWT_SECRET;
  const app = createServiceApp({
    name: 'posts',
    logger,
    routers: [
      postRoutes(posts, {
        tokens,
        accounts,
        writes: writeBulkhead(config.WRITE_CONCURRENCY ?? 0),
      }),
      deletedAccountRoutes(accounts, { secret }),
    ],
    readiness: { database: () => isMongoReady(connection) },
    tokens,
  });
  return { app, turns, accounts, events };
}

/**
 * Lookups of list texts that are not kept: LIST_COLD_CONCURRENCY at once. Fairness comes from the
 * turns, not from a small line: a client with many waiting delays another by one lookup each. So
 * a busy address (an office, 40 workers) may have 64 waiting, and 64 per place in all; past that
 * 429 or 503.
 */
export function coldListBulkhead({ LIST_COLD_CONCURRENCY = 2 }: Partial<Pick<Config, 'LIST_COLD_CONCURRENCY'>>) {
  return createBulkhead({
    name: 'list',
    concurrency: LIST_COLD_CONCURRENCY,
    perClient: 64,
    total: 64 * LIST_COLD_CONCURRENCY,
  });
}
