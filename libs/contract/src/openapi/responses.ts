/**
 * How the document says an answer: a response, a JSON error with an example of its message, and
 * the error answers that operations share by name.
 */
import { messages } from '@cs/errors';

export type Schema = Record<string, unknown>;

export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
export const json = (schema: Schema) => ({ 'application/json': { schema } });
export const response = (description: string, schema?: Schema, headers?: Schema) => ({
  description,
  ...(schema ? { content: json(schema) } : {}),
  ...(headers ? { headers } : {}),
});

/**
 * A JSON error answer, `{error}`, with an example of its message: a viewer of the document would
 * otherwise make one up from the schema, the validation step's `errors` included.
 */
export const failure = (description: string, example: string, headers?: Schema) => ({
  description,
  content: { 'application/json': { schema: ref('Error'), example: { error: example } } },
  ...(headers ? { headers } : {}),
});

/** Error responses shared by operations, each with the contract's `{error}` shape. */
export const errorResponses = {
  BadRequest: response('The request is malformed or breaks a rule.', {
    oneOf: [ref('Error'), ref('ValidationErrors')],
  }),
  Unauthorized: failure('No Bearer token (no-token-provided), or an invalid or expired one.', messages.noToken),
  Forbidden: failure(
    'Cookie mode asked for by a request the browser marks cross-site.',
    'Cookie mode is only for requests from this site',
  ),
  NotFound: failure('No such resource, or not the caller’s.', messages.notFound),
  Conflict: failure(
    'The resource changed at the same time, or is in another state.',
    'The post changed at the same time; try again',
  ),
  Unprocessable: failure(
    'The request is well formed, but what it names cannot be processed (an image too large to decode, or corrupt).',
    'The image cannot be read (corrupt or truncated); no thumbnail is made of it',
  ),
  PayloadTooLarge: failure('The body is larger than 100 kB.', messages.bodyTooLarge),
  UnsupportedMediaType: failure('A body that is not JSON.', messages.unsupportedMediaType),
  TooManyRequests: failure(
    'Over the rate limit for this client (or, on login, the account’s failed-login throttle).',
    messages.tooManyRequests,
    {
      'Retry-After': { description: 'Seconds to wait.', schema: { type: 'string' } },
    },
  ),
  ServerError: failure('An unexpected failure; the message names the operation.', 'Failed to fetch posts'),
  BadGateway: failure('The owning service could not be reached.', messages.upstreamUnavailable),
  Unavailable: failure(
    'A dependency (database, storage, the files service, the rate-limit store) is unavailable.',
    messages.unavailable,
  ),
  GatewayTimeout: failure('The owning service did not answer in time.', messages.upstreamTimeout),
} as const;

export type ErrorName = keyof typeof errorResponses;
export const STATUS: Record<ErrorName, number> = {
  BadRequest: 400,
  Unauthorized: 401,
  Forbidden: 403,
  NotFound: 404,
  Conflict: 409,
  PayloadTooLarge: 413,
  UnsupportedMediaType: 415,
  Unprocessable: 422,
  TooManyRequests: 429,
  ServerError: 500,
  BadGateway: 502,
  Unavailable: 503,
  GatewayTimeout: 504,
};
