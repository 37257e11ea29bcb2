/**
 * The one validation step of every route: a request's body, path parameter or query against its
 * schema (the objects in `@cs/contract` the OpenAPI document is built from), before the handler.
 * What a failure answers is written in the schema too, so no route says it in code:
 *
 * - `x-messages` on any (sub)schema: the message of a failing rule there, one string for all of
 *   its rules or one per keyword (`{pattern: '…', default: '…'}`). The nearest one up the schema
 *   wins; for a missing field, the field's own schema is asked before the object's.
 * - `x-error: {status}` on the root: the route answers `{error: message}` with that status and the
 *   first failure's message, rather than the validation step's `400 {errors: [{field, message}]}`
 *   (one entry a field); the entries come beside it (`{error, errors}`), so that a form can mark
 *   every field at once (a query, which is no form, answers `{error}` alone). First are the
 *   failures whose message the root gives, in the order the root writes them (`{required, type}`:
 *   a missing field before a wrong type); then the others, in the order of the schema's fields.
 * - `x-maxBytes` on a string: its largest length in bytes of UTF-8.
 * - `x-wellFormed: true` on a string: no lone surrogate in it.
 *
 * A field sent as null or "" that breaks a rule is told what a missing one is told: for the
 * contract, "missing or empty" is one case.
 */
import { HttpError, type ValidationEntry } from '@cs/errors';
import type { RouterParameterMiddleware } from '@koa/router';
import Ajv, { type ErrorObject, type SchemaObject } from 'ajv';
import type { AppMiddleware, AppState } from './context';

/**
 * One ajv instance for all request schemas. Unknown properties are removed where a schema says
 * `additionalProperties: false`, so extra fields are ignored and never reach a write. Union types
 * (`['string', 'null']`) are how JSON Schema says "nullable"; strict mode allows them.
 */
const ajv = new Ajv({
  allErrors: true,
  removeAdditional: true,
  useDefaults: true,
  strict: true,
  allowUnionTypes: true,
});
ajv.addKeyword({
  keyword: 'x-error',
  metaSchema: {
    type: 'object',
    required: ['status'],
    properties: { status: { type: 'integer', minimum: 400, maximum: 499 } },
    additionalProperties: false,
  },
});
ajv.addKeyword({
  keyword: 'x-messages',
  metaSchema: { anyOf: [{ type: 'string' }, { type: 'object', additionalProperties: { type: 'string' } }] },
});
ajv.addKeyword({
  keyword: 'x-maxBytes',
  type: 'string',
  schemaType: 'number',
  errors: false,
  validate: (max: number, data: string) => Buffer.byteLength(data, 'utf8') <= max,
});

// `x-wellFormed`: no lone surrogate (half of a UTF-16 pair), which JSON may carry (`"\\ud800"`)
// and no UTF-8 text can.
ajv.addKeyword({
  keyword: 'x-wellFormed',
  type: 'string',
  schemaType: 'boolean',
  errors: false,
  validate: (on: boolean, data: string) => !on || data.isWellFormed(),
});

type Schema = Readonly<Record<string, unknown>>;
type Messages = string | Readonly<Record<string, string>>;

/** What a validation middleware checks, for a look over an app's routes (see routeRules). */
export type RequestRule =
  | { in: 'body'; schema: SchemaObject }
  | { in: 'param'; schema: SchemaObject }
  | { in: 'query'; schema: SchemaObject }
  | { in: 'none' };
const rules = new WeakMap<object, RequestRule>();

export function requestRuleOf(middleware: unknown): RequestRule | undefined {
  return typeof middleware === 'function' ? rules.get(middleware) : undefined;
}

const isSchema = (value: unknown): value is Schema =>
  value !== null && typeof value === 'object' && !Array.isArray(value);
/** Keywords whose value holds subschemas by name or by index: the next path segment picks one. */
const SCHEMA_CONTAINERS = new Set([
  'properties',
  'patternProperties',
  'dependentSchemas',
  '$defs',
  'allOf',
  'anyOf',
  'oneOf',
  'prefixItems',
]);

/** A JSON pointer's segments; ajv also URI-encodes those of a schemaPath (`#/properties/…`). */
function segmentsOf(pointer: string): string[] {
  const fragment = pointer.startsWith('#');
  return pointer
    .replace(/^#?\//, '')
    .split('/')
    .filter(Boolean)
    .map((s) => (fragment ? decodeURIComponent(s) : s).replaceAll('~1', '/').replaceAll('~0', '~'));
}

/** The subschemas an error's schemaPath passes through, nearest first; the failing keyword is not one. */
function schemasAlong(root: Schema, error: ErrorObject): Schema[] {
  const segments = segmentsOf(error.schemaPath);
  const chain = [root];
  let node: unknown = root;
  for (let i = 0; i < segments.length - 1; i++) {
    const keyword = segments[i] as string;
    node = isSchema(node) ? node[keyword] : undefined;
    if (SCHEMA_CONTAINERS.has(keyword) && i < segments.length - 2) {
      i += 1;
      node = (node as Record<string, unknown> | undefined)?.[segments[i] as string];
    }
    if (isSchema(node)) chain.push(node);
  }
  if (error.keyword === 'required') {
    const object = chain[chain.length - 1] as Schema;
    const field = (object.properties as Record<string, unknown> | undefined)?.[String(error.params.missingProperty)];
    if (isSchema(field)) chain.push(field);
  }
  return chain.reverse();
}

function valueAt(data: unknown, pointer: string): unknown {
  let value = data;
  for (const segment of segmentsOf(pointer)) value = (value as Record<string, unknown> | undefined)?.[segment];
  return value;
}

interface Failure extends ValidationEntry {
  /** Where the root's `x-messages` lists the message; undefined when a field's own schema gave it. */
  rank: number | undefined;
}

function failureOf(root: Schema, data: unknown, error: ErrorObject): Failure {
  const field =
    error.keyword === 'required' ? String(error.params.missingProperty) : (segmentsOf(error.instancePath)[0] ?? '');
  const value = error.keyword === 'required' ? undefined : valueAt(data, error.instancePath);
  const keys = value === null || value === '' ? ['required', error.keyword] : [error.keyword];
  const chain = schemasAlong(root, error);
  const rankAt = (schema: Schema, key: string) => {
    if (schema !== root) return undefined;
    const messages = root['x-messages'] as Messages;
    return typeof messages === 'string' ? 0 : Object.keys(messages).indexOf(key);
  };
  for (const key of keys) {
    for (const schema of chain) {
      const messages = schema['x-messages'] as Messages | undefined;
      if (typeof messages === 'string') return { field, message: messages, rank: rankAt(schema, key) };
      const message = messages?.[key];
      if (message !== undefined) return { field, message, rank: rankAt(schema, key) };
    }
  }
  for (const schema of chain) {
    const messages = schema['x-messages'];
    if (isSchema(messages) && typeof messages.default === 'string')
      return { field, message: messages.default, rank: undefined };
  }
  return { field, message: `${field || 'body'} ${error.message ?? 'is invalid'}`, rank: undefined };
}

/**
 * ajv removes unknown fields while it checks, after the object's own rules: `{tags: [...]}` would
 * pass `minProperties: 1` and reach the handler empty. The body's unknown fields go first.
 */
function removeUnknown(schema: SchemaObject): (data: unknown) => void {
  if (schema.additionalProperties !== false || !isSchema(schema.properties)) return () => {};
  const known = new Set(Object.keys(schema.properties));
  return (data) => {
    if (!isSchema(data)) return;
    for (const key of Object.keys(data)) if (!known.has(key)) delete (data as Record<string, unknown>)[key];
  };
}

/**
 * Compiles once; a function that gives the error to throw for data that breaks the schema. With
 * `fields: false`, an `x-error` answer is the first message alone, whatever it names.
 */
function compileRule(
  schema: SchemaObject,
  { fields: withFields = true } = {},
): (data: unknown) => HttpError | undefined {
  const validate = ajv.compile(schema);
  const strip = removeUnknown(schema);
  const answer = schema['x-error'] as { status: number } | undefined;
  return function check(data) {
    strip(data);
    if (validate(data)) return undefined;
    const failures = (validate.errors ?? [])
      .map((error) => failureOf(schema, data, error))
      .sort((a, b) => (a.rank ?? Number.MAX_SAFE_INTEGER) - (b.rank ?? Number.MAX_SAFE_INTEGER));
    const entries = new Map<string, ValidationEntry>();
    for (const { field, message } of failures) if (!entries.has(field)) entries.set(field, { field, message });
    const fields = [...entries.values()];
    if (answer) {
      // A body's fields, each named; a path parameter's failure names none, and has none.
      const named = withFields && fields.length > 0 && fields.every((f) => f.field !== '');
      return new HttpError(answer.status, failures[0]?.message ?? 'Invalid request', named ? { fields } : {});
    }
    return new HttpError(400, 'Validation failed', { details: fields });
  };
}

/** The request body against `schema`, before the handler (which then reads it with bodyOf). */
export function validateBody(schema: SchemaObject): AppMiddleware {
  const check = compileRule(schema);
  const middleware: AppMiddleware = async function validateBody(ctx, next) {
    const failure = check(ctx.request.body);
    if (failure) throw failure;
    await next();
  };
  rules.set(middleware, { in: 'body', schema });
  return middleware;
}

/** A route that takes no body, said as such: whatever is sent is ignored (and removed). */
export function noBody(): AppMiddleware {
  const middleware = validateBody({ type: 'object', additionalProperties: false });
  rules.set(middleware, { in: 'none' });
  return middleware;
}

/** For `router.param(name, validateParam(schema))`: every route of the router with `:name`, before anything else runs. */
export function validateParam(schema: SchemaObject): RouterParameterMiddleware<AppState> {
  const check = compileRule(schema);
  const middleware: RouterParameterMiddleware<AppState> = async function validateParam(value, _ctx, next) {
    const failure = check(value);
    if (failure) throw failure;
    await next();
  };
  rules.set(middleware, { in: 'param', schema });
  return middleware;
}

/**
 * The query string against `schema`, before the handler (which reads it from ctx.query, as Koa
 * parsed it: a parameter given twice is a list). Its failure is the first message alone,
 * `{error}`: a query is not a form with fields to mark.
 */
export function validateQuery(schema: SchemaObject): AppMiddleware {
  const check = compileRule(schema, { fields: false });
  const middleware: AppMiddleware = async function validateQuery(ctx, next) {
    const failure = check(ctx.query);
    if (failure) throw failure;
    await next();
  };
  rules.set(middleware, { in: 'query', schema });
  return middleware;
}
