import { HttpError, type ValidationEntry } from '@cs/errors';
import Ajv, { type ErrorObject, type SchemaObject } from 'ajv';
import type { AppMiddleware } from './context';

/**
 * One ajv instance for all request schemas. Unknown properties are removed where a schema says
 * `additionalProperties: false`, so extra fields are ignored and never reach a write.
 */
// Union types (`['string', 'null']`) are how JSON Schema says "nullable"; strict mode allows them.
const ajv = new Ajv({
  allErrors: true,
  removeAdditional: true,
  useDefaults: true,
  strict: true,
  allowUnionTypes: true,
});

/** A field's message, or one per failing ajv keyword with `default` for the rest. */
export type Messages = Readonly<Record<string, string | Readonly<Record<string, string>>>>;
export type Check = (data: unknown) => ValidationEntry[] | undefined;

function fieldOf(error: ErrorObject): string {
  if (error.keyword === 'required') return String(error.params.missingProperty);
  return error.instancePath.split('/')[1] ?? '';
}

function messageFor(messages: Messages, field: string, error: ErrorObject): string {
  const given = messages[field];
  if (typeof given === 'string') return given;
  return given?.[error.keyword] ?? given?.default ?? `${field || 'body'} ${error.message ?? 'is invalid'}`;
}

/** Compiles once; returns one entry per failing field, with the field's own message if given. */
export function compileCheck(schema: SchemaObject, messages: Messages = {}): Check {
  const validate = ajv.compile(schema);
  return function check(data) {
    if (validate(data)) return undefined;
    const entries = new Map<string, ValidationEntry>();
    for (const error of validate.errors ?? []) {
      const field = fieldOf(error);
      if (!entries.has(field)) entries.set(field, { field, message: messageFor(messages, field, error) });
    }
    return [...entries.values()];
  };
}

/** The contract's validation step: 400 `{errors: [{field, message}]}` before the handler. */
export function validateBody(schema: SchemaObject, messages: Messages = {}): AppMiddleware {
  const check = compileCheck(schema, messages);
  return async function validateBody(ctx, next) {
    const errors = check(ctx.request.body);
    if (errors) throw new HttpError(400, 'Validation failed', { details: errors });
    await next();
  };
}
