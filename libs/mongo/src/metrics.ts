/**
 * The database's share, from the driver's own events: every command's duration by operation,
 * collection and outcome, and the connection pool's use. Command events are on only with metrics
 * (`monitorCommands`); pool events always are, and cost one counter step each.
 */
import { counter, histogram, sampledGauge } from '@cs/telemetry';
import type { Connection } from 'mongoose';

type Command = Record<string, unknown>;

interface CommandEvent {
  requestId: number;
  commandName: string;
  duration?: number;
  command?: Command;
}

/** The collection a command acts on, as the driver names it in the command itself. */
function collectionOf(event: CommandEvent): string {
  const named = event.command?.[event.commandName];
  if (typeof named === 'string') return named;
  const collection = event.command?.collection; // getMore
  return typeof collection === 'string' ? collection : '';
}

export function watchDatabase(connection: Connection, maxPoolSize: number): void {
  const client = connection.getClient();
  const duration = histogram(
    'db_client_operation_duration_seconds',
    'Database commands as the driver saw them, by command, collection and outcome.',
    ['operation', 'collection', 'outcome'],
  );
  const collections = new Map<number, string>();
  client.on('commandStarted', (event: CommandEvent) => {
    collections.set(event.requestId, collectionOf(event));
  });
  const finished = (outcome: 'ok' | 'error') => (event: CommandEvent) => {
    const collection = collections.get(event.requestId) ?? '';
    collections.delete(event.requestId);
    duration.observe({ operation: event.commandName, collection, outcome }, (event.duration ?? 0) / 1000);
  };
  client.on('commandSucceeded', finished('ok'));
  client.on('commandFailed', finished('error'));

  let open = 0;
  let used = 0;
  client.on('connectionCreated', () => {
    open += 1;
  });
  client.on('connectionClosed', () => {
    open = Math.max(0, open - 1);
  });
  client.on('connectionCheckedOut', () => {
    used += 1;
  });
  client.on('connectionCheckedIn', () => {
    used = Math.max(0, used - 1);
  });
  const waits = counter(
    'db_client_connection_checkout_failures_total',
    'Operations that could not get a pooled connection (pool full past its wait, or pool cleared).',
    ['reason'],
  );
  client.on('connectionCheckOutFailed', (event: { reason?: string }) => {
    waits.inc({ reason: event.reason ?? 'unknown' });
  });
  sampledGauge(
    'db_client_connections',
    'Connections to the database, by state; max is the pool size.',
    ['state'],
    (set) => {
      set({ state: 'used' }, used);
      set({ state: 'idle' }, Math.max(0, open - used));
      set({ state: 'max' }, maxPoolSize);
    },
  );
}
