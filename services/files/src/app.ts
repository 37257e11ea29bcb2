import type { TokenVerifier } from '@cs/auth';
import { createServiceApp, deletedAccountRoutes } from '@cs/koa';
import type { ServiceReach } from '@cs/lifecycle';
import type { Logger } from '@cs/log';
import { type Connection, createDeletedAccounts, createTurns, isMongoReady } from '@cs/mongo';
import { ObjectStorage } from '@cs/storage';
import type { Config } from './config';
import { createLinkSlots } from './links/link-slots';
import { linkSlotModel, multipartSlotModel } from './links/model';
import { createUnclaimedBudget } from './links/unclaimed-budget';
import { messages } from './messages';
import { createMultipart } from './multipart/multipart';
import { attachmentRemovalModel } from './removals/model';
import { createNotesClient } from './removals/notes-client';
import { createRemovals } from './removals/removals';
import { internalRoutes, multipartRoutes, uploadRoutes, uploadRulesRoutes } from './routes';
import { createSweeper, type Sweeper, sweeperFailures, sweeperRemoved } from './sweeper/sweeper';
import { createThumbnails } from './thumbnails/thumbnails';
import { createAccountPurge } from './uploads/account-purge';
import { uploadModel } from './uploads/model';
import { createRecords } from './uploads/records';
import { createRelease } from './uploads/release';
import { createUploads } from './uploads/uploads';

export interface Deps {
  config: Config;
  connection: Connection;
  logger: Logger;
  /** How tokens are verified: the signature, and the revocation list that follows identity's log. */
  tokens: TokenVerifier;
  /** How the services this one calls are reached: over the network, or in memory in one process. */
  reach: ServiceReach;
}

export async function createApp({ config, connection, logger, tokens, reach }: Deps) {
  const model = uploadModel(connection);
  const slotModel = linkSlotModel(connection);
  const multipartSlotsModel = multipartSlotModel(connection);
  const removalModel = attachmentRemovalModel(connection);
  await Promise.all([model.init(), slotModel.init(), multipartSlotsModel.init(), removalModel.init()]);
  const turns = await createTurns(connection);
  const storage = new ObjectStorage({
    endpoint: config.S3_ENDPOINT,
    publicEndpoint: config.S3_PUBLIC_ENDPOINT || config.S3_ENDPOINT,
    region: config.STORAGE_REGION,
    bucket: config.STORAGE_BUCKET,
    accessKeyId: config.S3_ACCESS_KEY_ID,
    secretAccessKey: config.S3_SECRET_ACCESS_KEY,
  });
  const records = createRecords(model, turns);
  const slots = createLinkSlots({ slots: slotModel, maxOpen: config.UPLOAD_MAX_OPEN_LINKS });
  const multipartSlots = createLinkSlots({
    slots: multipartSlotsModel,
    maxOpen: config.UPLOAD_MAX_OPEN_MULTIPART,
    tooMany: messages.tooManyOpenMultipart,
  });
  const budget = createUnclaimedBudget({
    model,
    limits: {
      maxCount: config.UPLOAD_MAX_UNCLAIMED,
      maxBytes: config.UPLOAD_MAX_UNCLAIMED_BYTES,
      sizelessBytes: config.UPLOAD_MAX_BYTES,
      everyMs: config.SWEEP_INTERVAL,
    },
  });
  const settings = {
    uploadTtlS: config.UPLOAD_URL_TTL_S,
    downloadTtlS: config.DOWNLOAD_URL_TTL_S,
    claimTtlMs: config.UPLOAD_CLAIM_TTL,
    releasedRetentionMs: config.RELEASED_RETENTION,
    maxBytes: config.UPLOAD_MAX_BYTES,
    checkDelayMs: config.UPLOAD_CHECK_DELAY,
  };
  const release = createRelease({ records, storage, multipartSlots, settings });
  const uploads = createUploads({ model, records, release, slots, budget, storage, settings, logger });
  const notes = createNotesClient({
    baseUrl: config.NOTES_URL,
    fetch: reach.fetch,
    secret: config.JWT_SECRET,
    timeoutMs: config.NOTES_TIMEOUT,
  });
  const thumbnails = createThumbnails({
    records,
    storage,
    settings: {
      sizes: config.THUMB_SIZES,
      workers: config.THUMB_WORKERS,
      maxWaitMs: config.THUMB_WAIT,
      maxPixels: config.THUMB_MAX_PIXELS,
      maxBytes: config.UPLOAD_MAX_BYTES,
      linkTtlS: config.DOWNLOAD_URL_TTL_S,
    },
  });
  const removals = createRemovals({ entries: removalModel, model, notes, logger });
  const sweeper = createSweeper({ model, records, release, removals, budget, storage, settings, logger });
  const multipart = createMultipart({
    model,
    records,
    uploads,
    slots: multipartSlots,
    budget,
    storage,
    settings: {
      partSize: config.MULTIPART_PART_SIZE,
      urlTtlS: config.UPLOAD_URL_TTL_S,
      claimTtlMs: config.UPLOAD_CLAIM_TTL,
    },
  });
  const accounts = await createDeletedAccounts(
    connection,
    createAccountPurge({ model, storage, slots, multipartSlots }),
  );
  const allowedTypes = config.UPLOAD_ALLOWED_TYPES;
  // A file larger than the account may hold unattached could never be kept.
  const maxBytesMultipart = Math.min(config.UPLOAD_MAX_BYTES_MULTIPART, config.UPLOAD_MAX_UNCLAIMED_BYTES);
  const secret = config.JWT_SECRET;
  const app = createServiceApp({
    name: 'files',
    logger,
    routers: [
      uploadRulesRoutes({ allowedTypes, maxBytes: config.UPLOAD_MAX_BYTES, maxBytesMultipart }),
      uploadRoutes(uploads, { tokens, accounts, rules: { allowedTypes, maxBytes: config.UPLOAD_MAX_BYTES } }),
      multipartRoutes(multipart, { tokens, accounts, rules: { allowedTypes, maxBytes: maxBytesMultipart } }),
      internalRoutes(uploads, { secret, accounts, thumbnails }),
      deletedAccountRoutes(accounts, { secret }),
    ],
    readiness: { database: () => isMongoReady(connection), storage: () => storage.bucketReady() },
    tokens,
  });
  return { app, uploads, sweeper, multipart, storage, turns, accounts, removals };
}

/**
 * One pass of the sweeper, each step until no work of its kind is due (sweep-pace.ts): stale keys
 * and unfinished releases; the listing of storage (unclaimed objects recorded or, past the claim
 * TTL, deleted; late over-limit ones, whose check is made due again); every account cut back to
 * its budget of uploads not yet attached; size-less links past their expiry checked (the notes of
 * removed attachments are told by the removals outbox); released records past their retention.
 * The server runs it every SWEEP_INTERVAL.
 */
export async function sweepOnce(sweeper: Sweeper, logger: Logger): Promise<void> {
  try {
    const released = await sweeper.releaseStale();
    sweeperRemoved.inc({ kind: 'stale' }, released);
    const unclaimed = await sweeper.sweepUnclaimed();
    sweeperRemoved.inc({ kind: 'unclaimed' }, unclaimed);
    const overBudget = await sweeper.enforceBudget();
    sweeperRemoved.inc({ kind: 'over_budget' }, overBudget);
    const { refused } = await sweeper.checkExpiredLinks();
    sweeperRemoved.inc({ kind: 'refused' }, refused);
    const purged = await sweeper.purgeReleased();
    sweeperRemoved.inc({ kind: 'purged' }, purged);
    if (refused + released + unclaimed + overBudget + purged > 0) {
      logger.info({ refused, released, unclaimed, overBudget, purged }, 'sweeper pass');
    }
  } catch (err) {
    sweeperFailures.inc();
    throw err;
  }
}
