/**
 * The notes service's view of the files service: three calls, each with a timeout, made with
 * the caller's own token so files checks ownership itself. Files being away is a 503 here,
 * never a hang; what files refuses comes back as a 4xx with its message.
 *
 * A claim or a download link that could not reach files at all (a restart, a container being
 * replaced) is sent again within `retryWindowMs` (@cs/lifecycle's retry window, which the gateway
 * uses too); once files has been unreachable for longer than that, calls fail at once until it
 * answers again.
 * A release is not: the outbox sends it again later, and a delete never waits for files.
 */
import { HttpError, notDelivered } from '@cs/errors';
import { createRetryWindow, retryWithin } from '@cs/lifecycle';
import { type Fetch, traced } from '@cs/telemetry';
import { messages } from './messages';

/** What a claimed key holds: the file as its uploader named it, its size in bytes and its type. */
export interface Attachment {
  filename: string;
  size: number;
  contentType: string;
}

export interface FilesClient {
  claim(key: string, authorization: string): Promise<Attachment>;
  downloadLink(key: string, authorization: string): Promise<{ url: string; expiresIn: number }>;
  release(key: string, authorization: string): Promise<void>;
}

export function createFilesClient({
  baseUrl,
  fetch,
  timeoutMs,
  retryWindowMs = 0,
}: {
  baseUrl: string;
  /** How files is reached (over the network, or in memory in one process). */
  fetch: Fetch;
  timeoutMs: number;
  retryWindowMs?: number;
}): FilesClient {
  /** Shared by every call: files being down is learnt once, not by each request. */
  const retries = createRetryWindow(retryWindowMs);
  const post = traced(fetch);

  function send(path: string, key: string, authorization: string, retry: boolean): Promise<Response> {
    return retryWithin(
      retries,
      (err) => retry && notDelivered(err),
      () =>
        post(`${baseUrl}/internal/uploads/${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization },
          body: JSON.stringify({ key }),
          signal: AbortSignal.timeout(timeoutMs),
        }),
    );
  }

  async function call(path: string, key: string, authorization: string, retry = true): Promise<Response> {
    let res: Response;
    try {
      res = await send(path, key, authorization, retry);
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
      const { filename, size, contentType } = (await res.json()) as Attachment;
      return { filename, size, contentType };
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
      const res = await call('release', key, authorization, false);
      await res.arrayBuffer();
      if (!res.ok) throw new HttpError(502, `files refused the release (${res.status})`, { expose: false });
    },
  };
}
