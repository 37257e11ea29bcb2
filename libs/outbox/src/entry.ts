/**
 * What every outbox entry carries beside the domain's own fields, and the one place its schema
 * declares them: a domain's entry schema calls `withOutboxFields` rather than repeating them.
 */
import type { Schema } from 'mongoose';

/** The fields every entry has, beside the domain's own (`withOutboxFields` declares them). */
export interface OutboxEntry {
  _id: unknown;
  /** Tries taken so far. */
  attempts: number;
  /** Not tried before this time: settling, leased, or backing off. */
  dueAt: Date;
  /** What the last failed try threw. */
  lastError?: string | null;
  /** When the entry was written: the backlog's age, and the order of one document's entries. */
  createdAt: Date;
}

/**
 * Adds the bookkeeping fields to an entry schema, with the index on `dueAt` that a pass's query
 * uses, and returns the schema. `enqueue` sets every one of them; the defaults serve entries
 * written another way. `createdAt` is a field of its own, immutable: the schema must not also ask
 * for `timestamps` with a `createdAt`.
 */
export function withOutboxFields<E extends OutboxEntry>(schema: Schema<E>): Schema<E> {
  if (schema.path('createdAt'))
    throw new Error('an outbox entry schema declares createdAt itself: drop its timestamps');
  // A plain Schema: mongoose's types cannot check a definition against a generic schema.
  (schema as Schema).add({
    attempts: { type: Number, default: 0 },
    dueAt: { type: Date, required: true, default: () => new Date() },
    lastError: { type: String, default: null },
    createdAt: { type: Date, required: true, immutable: true, default: () => new Date() },
  });
  schema.index({ dueAt: 1 });
  return schema;
}

/**
 * The `_id` of the entry of one write of a versioned document: `<document>:v<version>`, or
 * `<document>:gone` for its deletion. The same write recorded again has the same entry.
 */
export function writeEntryId(document: string, version: number | null): string {
  return `${document}:${version === null ? 'gone' : `v${version}`}`;
}

/** The entry of the version before (a dispatch's `after`); none for a document's first version or its deletion. */
export function previousEntryId(document: string, version: number | null | undefined): string | undefined {
  return version ? writeEntryId(document, version - 1) : undefined;
}
