export {
  type BusEvent,
  compareIds,
  createEventBus,
  type EventBus,
  isEventId,
  type Resumed,
  type Retention,
  type StoredEvent,
} from './bus';
