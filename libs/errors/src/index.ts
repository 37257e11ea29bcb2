/**
 * The one error type of the system. Throw it for every expected failure: the error middleware
 * writes `{error: message}` with its status, or `{errors}` when `details` is given (the
 * validation step), or both when `fields` is (a contract's `{error}`, with every field's failure
 * beside it for a form to mark each field). Anything that is not an HttpError is unexpected and becomes a generic 500.
 *
 * `expose` follows koa: only 4xx messages are exposed by default; a 5xx message is shown only
 * when it was written for the client on purpose (the operation-specific messages of the contract).
 */
export interface ValidationEntry {
  field: string;
  message: string;
}

export interface HttpErrorOptions {
  cause?: unknown;
  expose?: boolean;
  details?: ValidationEntry[];
  /** Every field's failure, written beside the message as `errors`. */
  fields?: ValidationEntry[];
  headers?: Record<string, string>;
}

export class HttpError extends Error {
  readonly status: number;
  readonly expose: boolean;
  readonly details: ValidationEntry[] | undefined;
  readonly fields: ValidationEntry[] | undefined;
  readonly headers: Record<string, string> | undefined;

  constructor(status: number, message: string, options: HttpErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'HttpError';
    this.status = status;
    this.expose = options.expose ?? status < 500;
    this.details = options.details;
    this.fields = options.fields;
    this.headers = options.headers;
  }
}

/** A 400 (or `status`) about one field of the body: `{error, errors: [{field, message}]}`. */
export function fieldError(field: string, message: string, status = 400): HttpError {
  return new HttpError(status, message, { fields: [{ field, message }] });
}

export function isHttpError(err: unknown): err is HttpError {
  return err instanceof HttpError;
}

/** Messages shared by more than one service, so that every hop says the same thing. */
export const messages = {
  noToken: 'No token provided',
  invalidToken: 'Invalid or expired token',
  invalidId: 'Invalid ID format',
  notFound: 'Not found',
  methodNotAllowed: 'Method not allowed',
  malformedJson: 'Malformed JSON body',
  bodyTooLarge: 'Request body too large',
  unsupportedMediaType: 'Content-Type must be application/json',
  unavailable: 'Service temporarily unavailable',
  tokensNotCheckable: 'Tokens cannot be checked yet; try again shortly',
  upstreamUnavailable: 'Upstream service unavailable',
  upstreamTimeout: 'Upstream service timed out',
  tooManyRequests: 'Too many requests, please try again later',
  tooManyConnections: 'Too many connections from your address, please try again later',
  internal: 'Internal server error',
} as const;

const UNAVAILABLE_NAMES = new Set([
  'MongoServerSelectionError',
  'MongoNetworkError',
  'MongoNetworkTimeoutError',
  'MongoNotConnectedError',
  'MongoTopologyClosedError',
  'MongoPoolClearedError',
  'MongoWaitQueueTimeoutError',
]);
const UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH']);

/**
 * True when a dependency (database, storage, another service) could not be reached: the request
 * is not wrong and nothing is broken in us, so the answer is 503, not 500. Follows `cause`.
 */
export function isUnavailable(err: unknown): boolean {
  for (let e = err, depth = 0; e !== null && typeof e === 'object' && depth < 5; depth++) {
    const { name, code } = e as { name?: unknown; code?: unknown };
    if (typeof name === 'string' && UNAVAILABLE_NAMES.has(name)) return true;
    if (typeof code === 'string' && UNAVAILABLE_CODES.has(code)) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * The code of a connection given up because it did not open within its bound (the gateway's to a
 * service): its handshake went unanswered, so nothing was sent on it.
 */
export const CONNECT_TIMED_OUT = 'ETIMEDOUT_CONNECT';

/**
 * Codes of a connection that never delivered a request: nothing listens at the address (a
 * process restarting), the name resolves to nothing, the address is gone (a container being
 * replaced), or the connection never opened within its bound (ours, or undici's for fetch).
 * Resending such a request is safe whatever its method.
 */
const NOT_DELIVERED_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  CONNECT_TIMED_OUT,
  'UND_ERR_CONNECT_TIMEOUT',
]);

/** True when a call failed before its request reached the other side (see above). Follows `cause`. */
export function notDelivered(err: unknown): boolean {
  for (let e = err, depth = 0; e !== null && typeof e === 'object' && depth < 5; depth++) {
    const { code } = e as { code?: unknown };
    if (typeof code === 'string' && NOT_DELIVERED_CODES.has(code)) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}
