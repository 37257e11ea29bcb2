/**
 * What a failed forwarding answers, in the contract's shape: no byte from the service for the
 * upstream timeout is a 504, anything else that broke the exchange (refused, reset, gone) a 502.
 * Once an answer has begun streaming to the client, a failure can only cut it.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { messages } from '@cs/errors';
import type { Logger } from '@cs/log';
import { upstreamFailures } from '../metrics';
import { sendError } from '../respond';

const TIMED_OUT = 'ETIMEDOUT_UPSTREAM';

/** The error an exchange is destroyed with when the service sent nothing for `timeoutMs`. */
export function silentFor(name: string, timeoutMs: number): Error {
  return Object.assign(new Error(`${name} sent nothing for ${timeoutMs} ms`), { code: TIMED_OUT });
}

export function failureStatus(err: NodeJS.ErrnoException): 502 | 504 {
  return err.code === TIMED_OUT ? 504 : 502;
}

/** Answers the failure, or cuts an answer already under way. */
export function answerFailure(res: ServerResponse, status: 502 | 504): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  sendError(res, status, status === 504 ? messages.upstreamTimeout : messages.upstreamUnavailable);
}

/**
 * A forwarding that failed for good, whatever the transport: logged once with the request's id,
 * counted (when the client can still be told), and answered (or the answer under way cut).
 */
export function failForwarding(
  logger: Logger,
  {
    name,
    req,
    res,
    status,
    details = {},
  }: {
    name: string;
    req: IncomingMessage;
    res: ServerResponse;
    status: 502 | 504;
    /** What else the log says: the error's code, the attempts made, the timeout. */
    details?: Record<string, unknown>;
  },
): void {
  logger.error(
    { upstream: name, requestId: req.headers['x-request-id'], path: req.url, ...details },
    'upstream failed',
  );
  if (!res.headersSent) upstreamFailures.inc({ upstream: name, status });
  answerFailure(res, status);
}
