/**
 * A body over the limit is answered 413 once the client has sent the rest of it, which is read and
 * thrown away. An answer while the client still sends (what the gateway did before) is an early
 * response, and a proxy in front may not carry it: HAProxy with `option http-server-close` (ours,
 * ops/haproxy/haproxy.cfg) closes the client's connection with the rest of the body unread, a
 * reset, and the client sees "socket closed" instead of the 413: 9 of 40 requests with a 2 MB body
 * through HAProxy 2.6, none straight to the gateway. Read to its end first, the request is an
 * ordinary one at every hop.
 *
 * What is read is bounded: a body declared larger than DISCARD_MAX_BYTES is answered at once with
 * the connection closed, and one that keeps coming past that bound (chunked, no length declared)
 * is answered so and cut off. Node's request timeout bounds how long any of it may take.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { messages } from '@cs/errors';
import { sendError } from './respond';

/** The most of a refused body that is read before its answer: 16 MiB. */
export const DISCARD_MAX_BYTES = 16 * 1024 * 1024;

export function refuseBodyTooLarge(req: IncomingMessage, res: ServerResponse): void {
  const declared = Number(req.headers['content-length'] ?? Number.NaN);
  if (req.complete || declared > DISCARD_MAX_BYTES) {
    closeWith413(res);
    return;
  }
  let discarded = 0;
  const onData = (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded <= DISCARD_MAX_BYTES) return;
    req.off('data', onData).off('end', onEnd);
    closeWith413(res);
  };
  const onEnd = () => {
    req.off('data', onData);
    sendError(res, 413, messages.bodyTooLarge);
  };
  req.on('data', onData).once('end', onEnd);
  req.resume();
}

function closeWith413(res: ServerResponse): void {
  res.setHeader('connection', 'close');
  sendError(res, 413, messages.bodyTooLarge);
}
