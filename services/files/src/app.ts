import { HttpError } from '@cs/errors';
import { createServiceApp, deletedAccountRoutes } from '@cs/koa';
import type { Logger } from '@cs/log';
import { type Connection, createDeletedAccounts, createTurns, isMongoReady } from '@cs/mongo';
import { ObjectStorage } from '@cs/storage';
import type { Config } from './config';
import { blockWindowMs, createLinkBlocks } from './link-blocks';
import { createLinkSlots } from './link-slots';
import { budgetLapModel, linkSlotModel, uploadModel } from './model';
import { createMultipart } from './multipart';
import { createNotesClient } from './notes-client';
import { createRecords } from './records';
import { createRemovals, type Removals } from './removals';
import { createReservationCheck } from './reservations';
import { internalRoutes, multipartRoutes, uploadRoutes } from './routes';
import { messages } from './schemas';
import { createUploadBudget, type UploadBudget } from './upload-budget';
import {
  createUploads,
  type Slice,
  SWEEP_SLICE_MS,
  sliceOf,
  sweeperFailures,
  sweeperRemoved,
  sweepMarginMs,
  type Uploads,
} from './uploads';

export interface Deps {
  config: Config;
  connection: Connection;
  logger: Logger;
}

export async function createApp({ config, connection, logger }: Deps) {
  const model = uploadModel(connection);
  const slotModel = linkSlotModel(connection);
  const lapModel = budgetLapModel(connection);
  await Promise.all([model.init(), slotModel.init(), lapModel.init()]);
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
  const { links: linkBudget, multipart: multipartBudget } = createBudgets(config, lapModel, model, storage);
  const uploads = createUploads({
    model,
    records,
    slots,
    budget: linkBudget,
    blocks: createLinkBlocks({ budget: linkBudget, uploadTtlS: config.UPLOAD_URL_TTL_S }),
    storage,
    logger,
    settings: {
      uploadTtlS: config.UPLOAD_URL_TTL_S,
      downloadTtlS: config.DOWNLOAD_URL_TTL_S,
      claimTtlMs: config.UPLOAD_CLAIM_TTL,
      releasedRetentionMs: config.RELEASED_RETENTION,
      maxBytes: config.UPLOAD_MAX_BYTES,
      checkDelayMs: config.UPLOAD_CHECK_DELAY,
    },
  });
  const notes = createNotesClient({
    baseUrl: config.NOTES_URL,
    secret: config.JWT_SECRET,
    timeoutMs: config.NOTES_TIMEOUT,
  });
  const removals = createRemovals({ model, notes });
  const multipart = createMultipart({
    model,
    records,
    uploads,
    budget: multipartBudget,
    storage,
    settings: { partSize: config.MULTIPART_PART_SIZE, urlTtlS: config.UPLOAD_URL_TTL_S },
  });
  const budgets = [linkBudget, multipartBudget];
  const accounts = createDeletedAccounts(connection, async (userId) => {
    await uploads.removeAllOf(userId);
    for (const budget of budgets) await budget.removeAllOf(userId);
  });
  const allowedTypes = config.UPLOAD_ALLOWED_TYPES;
  const secret = config.JWT_SECRET;
  const app = createServiceApp({
    logger,
    routers: [
      uploadRoutes(uploads, { secret, accounts, rules: { allowedTypes, maxBytes: config.UPLOAD_MAX_BYTES } }),
      multipartRoutes(multipart, {
        secret,
        accounts,
        rules: { allowedTypes, maxBytes: config.UPLOAD_MAX_BYTES_MULTIPART },
      }),
      internalRoutes(uploads, { secret, accounts }),
      deletedAccountRoutes(accounts, { secret }),
    ],
    readiness: { database: () => isMongoReady(connection), storage: () => storage.bucketReady() },
  });
  return { app, uploads, multipart, storage, turns, accounts, removals, budgets };
}

/** The most slots a link budget is cut into: racers of one account mostly take different ones. */
const LINK_BUDGET_SLOTS = 8;

/**
 * Each account's bounds on what it holds unattached: single-PUT links by bytes and by count, in
 * up to 8 slots each large enough for the largest file (UPLOAD_MAX_BYTES); multipart uploads by
 * count, in one slot (their creation is rare, and storage's own call costs more than the wait).
 */
function createBudgets(
  config: Config,
  laps: ReturnType<typeof budgetLapModel>,
  model: ReturnType<typeof uploadModel>,
  storage: ObjectStorage,
) {
  const claimTtlMs = config.UPLOAD_CLAIM_TTL;
  const settle = createReservationCheck({
    model,
    storage,
    claimTtlMs,
    sweepMarginMs: sweepMarginMs(claimTtlMs),
    checkDelayMs: config.UPLOAD_CHECK_DELAY,
  });
  // Past this, every reservation has settled: its links (a block's, handed out for a window)
  // expired, and the sweeper removed anything unattached (an hour of slack for one behind).
  const linksMs = blockWindowMs(config.UPLOAD_URL_TTL_S) + config.UPLOAD_URL_TTL_S * 1000 + config.UPLOAD_CHECK_DELAY;
  const settledAfterMs = linksMs + claimTtlMs + sweepMarginMs(claimTtlMs) + 3_600_000;
  const maxBytes = config.UPLOAD_MAX_UNCLAIMED_BYTES;
  const maxCount = config.UPLOAD_MAX_UNCLAIMED;
  const slots = Math.max(1, Math.min(LINK_BUDGET_SLOTS, Math.floor(maxBytes / config.UPLOAD_MAX_BYTES), maxCount));
  const busy = () => new HttpError(503, messages.budgetBusy, { headers: { 'Retry-After': '1' } });
  const retryAfter = (seconds: number) => ({ headers: { 'Retry-After': String(seconds) } });
  const links = createUploadBudget({
    laps,
    family: 'links',
    slots,
    maxBytes,
    maxCount,
    settledAfterMs,
    settle,
    refused: (s) => new HttpError(429, messages.tooMuchUnclaimed(maxBytes, maxCount), retryAfter(s)),
    busy,
  });
  const open = config.UPLOAD_MAX_OPEN_MULTIPART;
  const multipart = createUploadBudget({
    laps,
    family: 'multipart',
    slots: 1,
    maxBytes: open * config.UPLOAD_MAX_BYTES_MULTIPART,
    maxCount: open,
    settledAfterMs,
    settle,
    refused: (s) => new HttpError(429, messages.tooManyMultipart(open), retryAfter(s)),
    busy,
  });
  return { links, multipart };
}

/**
 * One pass of the sweeper: stale keys and unfinished releases; unclaimed objects (and late
 * over-limit ones, whose check is made due again); size-less links past their expiry checked, and
 * the notes of removed attachments told; released records past their retention; budget laps past
 * any reservation's life. The server runs it every SWEEP_INTERVAL.
 *
 * Its pace follows the backlog: each kind of work goes on until nothing of it is due, or for
 * `sliceMs`; when one was cut short, the pass does the others and comes back to it, until none
 * was. So what a client can create in an interval (600 requests a minute from one address) is
 * removed as fast as the database and storage allow, never at a fixed number a pass.
 */
export async function sweepOnce(
  { uploads, removals, budgets = [] }: { uploads: Uploads; removals: Removals; budgets?: UploadBudget[] },
  logger: Logger,
  sliceMs = SWEEP_SLICE_MS,
): Promise<void> {
  try {
    for (let round = 1; ; round++) {
      const slices: Slice[] = [];
      const slice = () => {
        const next = sliceOf(sliceMs);
        slices.push(next);
        return next;
      };
      const released = await uploads.sweep(slice());
      sweeperRemoved.inc({ kind: 'stale' }, released);
      const unclaimed = await uploads.sweepUnclaimed(slice());
      sweeperRemoved.inc({ kind: 'unclaimed' }, unclaimed);
      const { refused } = await uploads.checkExpiredLinks(slice());
      sweeperRemoved.inc({ kind: 'refused' }, refused);
      await removals.drain();
      const purged = await uploads.purge(slice());
      sweeperRemoved.inc({ kind: 'purged' }, purged);
      for (const budget of budgets) await budget.prune();
      if (refused + released + unclaimed + purged > 0) {
        logger.info({ refused, released, unclaimed, purged, round }, 'sweeper pass');
      }
      if (!slices.some((s) => s.cutShort)) return;
    }
  } catch (err) {
    sweeperFailures.inc();
    throw err;
  }
}
