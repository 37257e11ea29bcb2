/**
 * Pipelined requests, bounded. HTTP/1.1 lets a client send requests on a connection before the
 * answers to the earlier ones have come. Node reads and runs each as it arrives, and holds its
 * answer until every answer before it is sent. Behind a stream, which is never done, nothing
 * queued is ever sent: each pipelined request would hold its whole answer for as long as the
 * stream lasts, and a client holding thousands of streams could make the process hold memory
 * without bound. So a connection may have at most MAX_IN_FLIGHT requests waiting for their
 * answers, and none behind a stream (the route table says which routes are streams); past that,
 * the connection is closed without a word, as a client that breaks the rules of HTTP gets. No
 * browser pipelines, and no client of ours.
 */
import type { IncomingMessage, RequestListener } from 'node:http';
import type { Socket } from 'node:net';

/** Requests of one connection that may wait for their answers at once. */
export const MAX_IN_FLIGHT = 16;

export function boundPipelining(
  isStream: (req: IncomingMessage) => boolean,
  listener: RequestListener,
): RequestListener {
  const inFlight = new WeakMap<Socket, number>();
  const streaming = new WeakSet<Socket>();
  return function boundedPipeline(req, res) {
    const { socket } = req;
    const held = inFlight.get(socket) ?? 0;
    if (streaming.has(socket) || held >= MAX_IN_FLIGHT) {
      socket.destroy();
      return;
    }
    inFlight.set(socket, held + 1);
    const stream = isStream(req);
    if (stream) streaming.add(socket);
    // Emitted once per response; `on` spares the wrapper `once` makes (a stream lasts for hours).
    res.on('close', () => {
      inFlight.set(socket, (inFlight.get(socket) ?? 1) - 1);
      if (stream) streaming.delete(socket);
    });
    listener(req, res);
  };
}
