export {
  createEventBus,
  DEFAULT_RETENTION,
  type EventBus,
  KEY_TTL_MS,
  type Resumed,
  type ResumeScope,
  type Retention,
} from './bus';
export { busClient, connectBus } from './connection';
export { audienceOf, type BusEvent, type StoredEvent } from './event';
export { compareIds, isEventId } from './event-id';
