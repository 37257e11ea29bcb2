import type { TokenVerifier } from '@cs/auth';
import type { EventBus } from '@cs/event-bus';
import { createServiceApp, deletedAccountRoutes, writeBulkhead } from '@cs/koa';
import type { ServiceReach } from '@cs/lifecycle';
import type { Logger } from '@cs/log';
import { type Connection, createDeletedAccounts, createTurns, isMongoReady } from '@cs/mongo';
import type { Config } from './config';
import { createFilesClient } from './files-client';
import { internalRoutes } from './internal-routes';
import { noteEventModel, noteModel, pendingReleaseModel } from './model';
import { createNoteEvents } from './note-events';
import { createNotes } from './notes';
import { createReleaseOutbox } from './release-outbox';
import { noteRoutes } from './routes';

export interface Deps {
  config: Pick<Config, 'JWT_SECRET' | 'FILES_URL' | 'FILES_TIMEOUT' | 'FILES_RETRY_WINDOW'> &
    Partial<Pick<Config, 'WRITE_CONCURRENCY' | 'FILES_THUMBNAIL_TIMEOUT'>>;
  connection: Connection;
  logger: Logger;
  /** How tokens are verified: the signature, and the revocation list that follows identity's log. */
  tokens: TokenVerifier;
  /** Where the change events go (the realtime service's streams). */
  bus: EventBus;
  /** How the services this one calls are reached: over the network, or in memory in one process. */
  reach: ServiceReach;
}

export async function createApp({ config, connection, logger, tokens, bus, reach }: Deps) {
  const notes = noteModel(connection);
  const pending = pendingReleaseModel(connection);
  const eventEntries = noteEventModel(connection);
  await Promise.all([notes.init(), pending.init(), eventEntries.init()]);
  const turns = await createTurns(connection);
  const files = createFilesClient({
    baseUrl: config.FILES_URL,
    fetch: reach.fetch,
    timeoutMs: config.FILES_TIMEOUT,
    thumbnailTimeoutMs: config.FILES_THUMBNAIL_TIMEOUT,
    retryWindowMs: config.FILES_RETRY_WINDOW,
  });
  const secret = config.JWT_SECRET;
  const outbox = createReleaseOutbox({ pending, notes, files, secret, logger });
  const events = createNoteEvents({ entries: eventEntries, notes, bus, logger });
  const domain = createNotes({ notes, files, outbox, events, turns });
  const accounts = await createDeletedAccounts(connection, (userId) => domain.removeAllBy(userId));
  const app = createServiceApp({
    name: 'notes',
    logger,
    routers: [
      noteRoutes(domain, {
        tokens,
        accounts,
        writes: writeBulkhead(config.WRITE_CONCURRENCY ?? 0),
      }),
      internalRoutes(domain, { secret }),
      deletedAccountRoutes(accounts, { secret }),
    ],
    // Files being away degrades attachments only; notes stay ready on their database alone.
    readiness: { database: () => isMongoReady(connection) },
    tokens,
  });
  return { app, outbox, events, turns, accounts };
}
