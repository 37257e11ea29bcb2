/**
 * Options every collection identity keeps shares: unknown fields throw, no `__v`. Records keyed by
 * a hash or a user id use `_id`, which every server, FerretDB included, answers from its index.
 */
export const strict = { strict: 'throw', versionKey: false } as const;
