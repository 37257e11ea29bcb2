/**
 * The notes service's view of the files service: three calls, each with a timeout, made with
 * the caller's own token so files checks ownership itself. Files being away is a 503 here,
 * never a hang; what files refuses comes back as a 4xx with its message.
 */
import { HttpError } from '@cs/errors';
import { messages } from './schemas';

export interface FilesClient {
  claim(key: string, authorization: string): Promise<void>;
  downloadLink(key: string, authorization: string): Promise<{ url: string; expiresIn: number }>;
  release(key: string, authorization: string): Promise<void>;
}

export function createFilesClient({ baseUrl, timeoutMs }: { baseUrl: string; timeoutMs: number }): FilesClient {
  async function call(path: string, key: string, authorization: string): Promise<Response> {
    let res: Response;
    try {
      res = await fetch(`${baseUrl}/internal/uploads/${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization },
        body: JSON.stringify({ key }),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (err) {
      throw new HttpError(503, messages.filesUnavailable, { cause: err, expose: true });
    }
    if (res.status >= 500) {
      await res.arrayBuffer();
      throw new HttpError(503, messages.filesUnavailable, {
        cause: new Error(`files answered ${res.status}`),
        expose: true,
      });
    }
    return res;
  }

  async function errorOf(res: Response): Promise<string> {
    const body = (await res.json().catch(() => ({}))) as { error?: unknown };
    return typeof body.error === 'string' ? body.error : `files answered ${res.status}`;
  }

  return {
    /** 4xx from files (not the caller's, not uploaded, already used): 400 with files' reason. */
    async claim(key, authorization) {
      const res = await call('claim', key, authorization);
      if (!res.ok) throw new HttpError(400, `attachmentKey cannot be attached: ${await errorOf(res)}`);
      await res.arrayBuffer();
    },

    async downloadLink(key, authorization) {
      const res = await call('download-link', key, authorization);
      if (res.status === 404) {
        await res.arrayBuffer();
        throw new HttpError(404, 'Attachment not found');
      }
      if (!res.ok) throw new HttpError(502, await errorOf(res), { expose: false });
      return (await res.json()) as { url: string; expiresIn: number };
    },

    async release(key, authorization) {
      const res = await call('release', key, authorization);
      await res.arrayBuffer();
      if (!res.ok) throw new HttpError(502, `files refused the release (${res.status})`, { expose: false });
    },
  };
}
