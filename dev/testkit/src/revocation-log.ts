import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { freePort } from '@cs/devstack';

/** What identity's revocation log answers when nothing was revoked. */
export function answerEmptyLog(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ entries: [], last: 0 }));
}

/** Whether a request is a read of the revocation log (`GET /internal/revocations?after=…`). */
export const isLogRead = (req: IncomingMessage): boolean =>
  req.method === 'GET' && (req.url?.startsWith('/internal/revocations?') ?? false);

/**
 * Identity as a process that is not identity sees it when identity is not the test's subject: it
 * answers the revocation log, with nothing revoked, and counts the reads.
 */
export async function emptyRevocationLog(): Promise<{ url: string; reads(): number; close(): Promise<void> }> {
  let reads = 0;
  const server = createServer((req, res) => {
    if (!isLogRead(req)) return void res.writeHead(404).end();
    reads += 1;
    answerEmptyLog(res);
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${port}`,
    reads: () => reads,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
