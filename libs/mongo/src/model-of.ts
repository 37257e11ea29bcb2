/**
 * A model on a service's own connection, compiled from its schema the first time it is asked
 * for and the same model every time after: a connection refuses to compile a name twice, and an
 * app may be built more than once on one connection (replicas in a test, an in-process restart).
 */
import type { Connection, Model, Schema } from 'mongoose';

/** `collection`: the collection's name when it is not the one mongoose derives from `name`. */
export function modelOf<T>(connection: Connection, name: string, schema: Schema<T>, collection?: string): Model<T> {
  return (connection.models[name] as Model<T> | undefined) ?? connection.model<T>(name, schema, collection);
}
