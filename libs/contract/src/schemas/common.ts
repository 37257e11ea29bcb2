/** What the schemas of every resource are made of: timestamps, ids, and the fields that refuse U+0000. */
import { OBJECT_ID_PATTERN } from '../limits';
import { requestMessages } from '../messages';

export const timestamp = { type: 'string', format: 'date-time' } as const;

/** Keywords that say what a value is for, not a rule it must meet. */
const ANNOTATIONS = new Set(['description', 'x-messages', 'x-error', 'default', 'examples']);

/**
 * A string field that refuses U+0000, told so in its own words. A field whose one message served
 * every rule keeps it for every rule it has (and for a missing or wrongly typed value).
 */
export function noNul<F extends Record<string, unknown>>(name: string, field: F) {
  const given = field['x-messages'] as string | Readonly<Record<string, string>> | undefined;
  const rules = ['required', 'type', ...Object.keys(field).filter((k) => !ANNOTATIONS.has(k))];
  const messages =
    typeof given === 'string' ? { ...Object.fromEntries(rules.map((k) => [k, given])), default: given } : given;
  return {
    ...field,
    // A string that holds U+0000; anything else is left to the field's other rules.
    not: { type: 'string', pattern: '\\u0000' },
    'x-messages': { ...messages, not: requestMessages.nul(name) },
  };
}
export const objectId = { type: 'string', pattern: OBJECT_ID_PATTERN } as const;

/** The root annotations of a route that answers `{error}`: `required` and `type` are its two messages. */
export function answersError(required: string, notStrings: string) {
  return { 'x-error': { status: 400 }, 'x-messages': { required, type: notStrings } } as const;
}
