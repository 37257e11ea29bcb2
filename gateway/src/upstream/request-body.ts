/**
 * Request bodies are buffered, not streamed: read whole, at most the gateway's body limit (100 kB
 * by default, and the API's bodies are small JSON; files go straight to storage through signed
 * links), before the first attempt. The buffer is what makes a resend safe: a request that never
 * reached the service is sent again with the same bytes, whatever its method. Answers are never
 * buffered: they stream (upstream-proxy.ts).
 */
import type { IncomingMessage } from 'node:http';

export type BodyRead =
  | { outcome: 'read'; body: Buffer | undefined }
  | { outcome: 'too-large' }
  | { outcome: 'aborted' };

/**
 * Reads a request's body into memory, at most `maxBytes`. Afterwards `Content-Length` describes
 * the body exactly as it will be sent, also when the client sent it chunked. No body: undefined.
 */
export function readBody(req: IncomingMessage, maxBytes: number): Promise<BodyRead> {
  const declared = req.headers['content-length'];
  if ((declared === undefined || declared === '0') && req.headers['transfer-encoding'] === undefined) {
    return Promise.resolve({ outcome: 'read', body: undefined });
  }
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (read: BodyRead) => {
      req.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose);
      resolve(read);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) return done({ outcome: 'too-large' });
      chunks.push(chunk);
    };
    const onEnd = () => {
      const body = Buffer.concat(chunks, size);
      delete req.headers['transfer-encoding'];
      req.headers['content-length'] = String(body.length);
      done({ outcome: 'read', body });
    };
    const onError = () => done({ outcome: 'aborted' });
    const onClose = () => {
      if (!req.complete) done({ outcome: 'aborted' });
    };
    req.on('data', onData).on('end', onEnd).on('error', onError).on('close', onClose);
  });
}
