/** Realtime's own metrics, beside every service's request metrics (@cs/koa). */
import { counter } from '@cs/telemetry';

export const streamsCut = counter(
  'realtime_streams_cut_total',
  'Streams cut off (their sockets destroyed) to bound what they hold: stalled, over the budget of the process, or under memory pressure. Their clients resume with Last-Event-ID.',
  ['reason'],
);
