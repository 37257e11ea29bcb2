import type { ServerResponse } from 'node:http';

/** The contract's error shape, from plain Node responses (no body parser, no framework helpers). */
export function sendError(
  res: ServerResponse,
  status: number,
  error: string,
  headers: Record<string, string> = {},
): void {
  const body = JSON.stringify({ error });
  res.writeHead(status, {
    ...headers,
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
  });
  res.end(body);
}
