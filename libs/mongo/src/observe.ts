/**
 * The database's share, for metrics and traces: every operation timed around the Mongoose model
 * call that issued it (a duration by operation, collection and outcome; a span under the request
 * that asked), and the connection pool's use from the driver's pool events.
 *
 * Not from the driver's command events (`monitorCommands`): to build a command's succeeded event
 * the driver decodes the whole reply a second time, which took 15% of a notes read's throughput
 * in `npm run bench`. Nor from OpenTelemetry's MongoDB instrumentation, which serialises every
 * command, sampled or not. The services reach the database only through their models, so their
 * queries, saves and aggregations are every operation there is.
 */
import {
  type CallSpan,
  counter,
  histogram,
  metricsEnabled,
  sampledGauge,
  startCallSpan,
  tracingOn,
} from '@cs/telemetry';
import type { Aggregate, Connection, Document, Model, MongooseQueryMiddleware, Query, Schema } from 'mongoose';

/** The query operations Mongoose runs middleware for; `this` is the Query. */
const QUERIES: MongooseQueryMiddleware[] = [
  'countDocuments',
  'deleteMany',
  'deleteOne',
  'distinct',
  'estimatedDocumentCount',
  'find',
  'findOne',
  'findOneAndDelete',
  'findOneAndReplace',
  'findOneAndUpdate',
  'replaceOne',
  'updateMany',
  'updateOne',
];

type Outcome = 'ok' | 'error';

/** One operation under way, from its `pre` hook to its `post` (or error) hook. */
interface Running {
  operation: string;
  collection: string;
  started: number;
  /** Its span, when the request that asked is traced and sampled. */
  span: CallSpan | undefined;
}

/** How each observed connection times an operation, for those timed by hand (`observed`). */
const observers = new WeakMap<
  Connection,
  {
    start(on: object, operation: string, collection: string): void;
    finish(on: object, outcome: Outcome, error?: unknown): void;
  }
>();

/**
 * Times `run`, one `operation` of `model`, as the middleware below times the others: for an
 * operation whose hooks cannot tell two calls under way apart (`insertMany`'s see the model, not
 * the call). Its span, if any, is a child of the request that started it.
 */
export async function observed<T>(
  model: Pick<Model<unknown>, 'db' | 'collection'>,
  operation: string,
  run: () => Promise<T>,
): Promise<T> {
  const observer = observers.get(model.db);
  if (!observer) return run();
  const on = {};
  observer.start(on, operation, model.collection.name);
  try {
    const result = await run();
    observer.finish(on, 'ok');
    return result;
  } catch (err) {
    observer.finish(on, 'error', err);
    throw err;
  }
}

/**
 * Observes every operation of every model compiled on `connection` from now on: with metrics on,
 * into `db_client_operation_duration_seconds`; with tracing on, as a span. Neither on, nothing.
 */
export function observeOperations(connection: Connection): void {
  if (!metricsEnabled() && !tracingOn()) return;
  const duration = metricsEnabled()
    ? histogram(
        'db_client_operation_duration_seconds',
        'Database operations as the service issued them, by operation, collection and outcome.',
        ['operation', 'collection', 'outcome'],
      )
    : undefined;
  const database = connection.name;
  const running = new WeakMap<object, Running>();

  const start = (on: object, operation: string, collection: string) => {
    const span = startCallSpan(`${operation} ${collection}`, () => ({
      'db.system.name': 'mongodb',
      'db.namespace': database,
      'db.collection.name': collection,
      'db.operation.name': operation,
    }));
    // Tracing only, and nothing to record for this one: most requests, at a sampling ratio.
    if (!duration && !span) return;
    running.set(on, { operation, collection, started: performance.now(), span });
  };
  const finish = (on: object, outcome: Outcome, error?: unknown) => {
    const op = running.get(on);
    if (!op) return; // failed before its pre hook ran
    running.delete(on);
    op.span?.end(error);
    duration?.observe(
      { operation: op.operation, collection: op.collection, outcome },
      (performance.now() - op.started) / 1000,
    );
  };
  const errors = { errorHandler: true } as const;
  observers.set(connection, { start, finish });

  connection.plugin((schema: Schema) => {
    for (const operation of QUERIES) {
      schema.pre(operation, function (this: Query<unknown, unknown>) {
        start(this, operation, this.model.collection.name);
      });
      schema.post(operation, function (this: Query<unknown, unknown>) {
        finish(this, 'ok');
      });
      schema.post(operation, errors, function (this: Query<unknown, unknown>, error: unknown) {
        finish(this, 'error', error);
      });
    }

    schema.pre('save', function (this: Document) {
      // Plugins reach nested schemas too, and a subdocument's save is part of its parent's, the
      // one operation sent: nothing of its own to time (and it has no collection).
      if ((this as Document & { $isSubdocument?: boolean }).$isSubdocument) return;
      start(this, 'save', (this.constructor as Model<unknown>).collection.name);
    });
    schema.post('save', function (this: Document) {
      finish(this, 'ok');
    });
    schema.post('save', errors, function (this: Document, error: unknown) {
      finish(this, 'error', error);
    });

    schema.pre('aggregate', function (this: Aggregate<unknown>) {
      start(this, 'aggregate', this.model().collection.name);
    });
    schema.post('aggregate', function (this: Aggregate<unknown>) {
      finish(this, 'ok');
    });
    schema.post('aggregate', errors, function (this: Aggregate<unknown>, error: unknown) {
      finish(this, 'error', error);
    });
  });
}

/** The connection pool's use, from the driver's pool events, with metrics on. */
export function watchPool(connection: Connection, maxPoolSize: number): void {
  const client = connection.getClient();
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
