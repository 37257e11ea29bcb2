/**
 * The request and response bodies of the public API, as JSON Schema (2020-12, the dialect of
 * OpenAPI 3.1). The services validate request bodies and path parameters with these very objects
 * (`validateBody`, `validateParam` of `@cs/koa`), and the OpenAPI document is built from them, so
 * the two cannot drift apart.
 *
 * A request schema also says what a failure answers, in annotations the validation step reads
 * (the OpenAPI document carries them as extensions, which clients ignore):
 * - `x-messages`: the message of a failing rule, one string for every rule of that (sub)schema or
 *   one per keyword (`{pattern: …, default: …}`); the nearest one up the schema wins, and for a
 *   missing field its own schema's first;
 * - `x-error: {status}`: the route answers the contract's `{error: message}` with that status and
 *   the first failure, not the validation step's `400 {errors: [{field, message}]}`. Messages given
 *   on the root come first, in the order written (a missing field before a wrong type);
 * - `x-maxBytes`: a string's largest length in bytes of UTF-8;
 * - `x-wellFormed: true`: a string with no lone surrogate (`String.prototype.isWellFormed`), a rule that
 *   a `pattern` cannot say to the regex engines of other languages.
 * No string a request sends may hold U+0000 (`noNul`): PostgreSQL refuses it in text (SQLSTATE
 * 22P05), so it is a 400 here and never reaches a database.
 * Where a schema says `additionalProperties: false`, unknown fields are removed before its rules
 * apply: `{tags: [...]}` is an update with no field (minProperties), not one with a field ignored.
 * A field sent as null or "" that breaks a rule counts as missing (the contract's "missing or empty").
 */

export * from './schemas/accounts';
export * from './schemas/email';
export * from './schemas/errors';
export * from './schemas/files';
export * from './schemas/health';
export * from './schemas/notes';
export * from './schemas/oidc';
export * from './schemas/params';
export * from './schemas/posts';
export * from './schemas/realtime';
