export {
  type BusEvent,
  busClient,
  compareIds,
  connectBus,
  createEventBus,
  DEFAULT_RETENTION,
  type EventBus,
  isEventId,
  KEY_TTL_MS,
  type Resumed,
  type Retention,
  type StoredEvent,
} from './bus';
