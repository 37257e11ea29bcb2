/**
 * Every failure the client reports is one of these, told apart by `kind`; no call ever throws raw
 * JSON or an untyped value.
 */

/** One field the API's validation step refused. */
export interface FieldError {
  field: string;
  message: string;
}

export type ErrorKind = 'api' | 'session-expired' | 'network' | 'storage' | 'aborted' | 'sign-in';

export abstract class ContentClientError extends Error {
  abstract readonly kind: ErrorKind;
}

/** The API answered with an error: its status, its message, and what else it said. */
export class ApiError extends ContentClientError {
  readonly kind: ErrorKind = 'api';
  constructor(
    message: string,
    readonly status: number,
    readonly details: {
      /** The validation step's field errors (400), if any. */
      errors?: FieldError[];
      /** The gateway's request id, to quote in a bug report. */
      requestId?: string;
      /** Seconds to wait, on 429. */
      retryAfter?: number;
    } = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }

  get errors(): FieldError[] {
    return this.details.errors ?? [];
  }

  get requestId(): string | undefined {
    return this.details.requestId;
  }

  get retryAfter(): number | undefined {
    return this.details.retryAfter;
  }
}

/** A protected call was refused with 401: the session is over and has been cleared. */
export class SessionExpiredError extends ApiError {
  override readonly kind: ErrorKind = 'session-expired';
  constructor(message: string, details: ApiError['details'] = {}) {
    super(message, 401, details);
    this.name = 'SessionExpiredError';
  }
}

/** No answer at all: the API or storage could not be reached (or a browser's CORS rule refused). */
export class NetworkError extends ContentClientError {
  readonly kind: ErrorKind = 'network';
  constructor(
    message: string,
    /** Which could not be reached: the API, or storage (through a signed link). */
    readonly target: 'api' | 'storage',
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'NetworkError';
  }
}

/** Storage answered a signed link with an error (an expired link, a refused length, 412…). */
export class StorageError extends ContentClientError {
  readonly kind: ErrorKind = 'storage';
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
    this.name = 'StorageError';
  }
}

/** The caller's AbortSignal stopped an upload; storage keeps nothing of it. */
export class UploadAbortedError extends ContentClientError {
  readonly kind: ErrorKind = 'aborted';
  constructor() {
    super('The upload was aborted');
    this.name = 'UploadAbortedError';
  }
}

/**
 * A sign-in with a provider came back without a session. `reason` is the API's (`#error=…`:
 * `email_in_use`, `access_denied`…), or `no_flow` when this browser holds no verifier for the flow:
 * it was begun in another browser, or finished already.
 */
export class SignInError extends ContentClientError {
  readonly kind: ErrorKind = 'sign-in';
  constructor(readonly reason: string) {
    super(`The sign-in did not complete (${reason})`);
    this.name = 'SignInError';
  }
}

/** An ApiError from a failed answer: the contract's `{error}` or `{errors: [...]}` body. */
export function apiErrorOf(response: Response, body: unknown, sessionEnded: boolean): ApiError {
  const { error, errors } = (typeof body === 'object' && body !== null ? body : {}) as {
    error?: unknown;
    errors?: unknown;
  };
  const fields = Array.isArray(errors)
    ? errors.filter((e): e is FieldError => typeof e?.field === 'string' && typeof e?.message === 'string')
    : undefined;
  const message =
    typeof error === 'string' && error
      ? error
      : fields?.length
        ? fields.map((f) => f.message).join('; ')
        : `HTTP ${response.status}`;
  const seconds = Number(response.headers.get('retry-after'));
  const details = {
    ...(fields?.length ? { errors: fields } : {}),
    ...(response.headers.get('x-request-id') ? { requestId: response.headers.get('x-request-id') as string } : {}),
    ...(response.status === 429 && Number.isFinite(seconds) && seconds >= 0 ? { retryAfter: seconds } : {}),
  };
  return sessionEnded ? new SessionExpiredError(message, details) : new ApiError(message, response.status, details);
}
