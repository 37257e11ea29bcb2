/**
 * An HTTP pass-through in front of a real server, for a test that needs a moment inside a request
 * of the code under test (say, between two of its steps). Every request goes on to the server as
 * it is, its Host header included (so a signed S3 request still verifies), and the server's answer
 * comes back as it is: nothing is faked. `before`, when set, runs once before the first request it
 * matches goes on.
 */
import { createServer, type IncomingMessage, request } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface PassThrough {
  /** Where the code under test is pointed. */
  readonly url: string;
  /** The real server, set once it is known. */
  target: string;
  /** Runs `step` before the next request that `matches` goes on, then is cleared. */
  before(matches: (req: IncomingMessage) => boolean, step: () => Promise<void>): void;
  /** Whether the step set by `before` has run. */
  readonly ran: boolean;
  close(): Promise<void>;
}

export async function startPassThrough(target = ''): Promise<PassThrough> {
  let pending: { matches: (req: IncomingMessage) => boolean; step: () => Promise<void> } | undefined;
  let ran = false;

  async function hold(req: IncomingMessage): Promise<void> {
    const hook = pending;
    if (!hook?.matches(req)) return;
    pending = undefined;
    await hook.step();
    ran = true;
  }

  const server = createServer((req, res) => {
    hold(req)
      .then(() => {
        const upstream = request(new URL(req.url ?? '/', self.target), { method: req.method, headers: req.headers });
        upstream.on('response', (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        });
        upstream.on('error', (err) => res.destroy(err));
        req.pipe(upstream);
      })
      .catch((err: unknown) => {
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(`pass-through step failed: ${String(err)}`);
      });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));

  const self: PassThrough = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    target,
    before(matches, step) {
      pending = { matches, step };
      ran = false;
    },
    get ran() {
      return ran;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return self;
}
