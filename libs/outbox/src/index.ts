export { BACKOFF_BASE_MS, BACKOFF_MAX_MS, backoffMs } from './backoff';
export { type OutboxEntry, previousEntryId, withOutboxFields, writeEntryId } from './entry';
export { createLeases, type Leases } from './lease';
export type { OutboxOptions } from './options';
export {
  createOutbox,
  isSettled,
  LEASE_MS,
  type Outbox,
  SETTLE_MS,
} from './outbox';
