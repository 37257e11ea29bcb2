/**
 * The notes service's view of the files service: four calls, each with a timeout, made with
 * the caller's own token so files checks ownership itself. Files being away is a 503 here,
 * never a hang; what files refuses comes back as a 4xx with its message.
 *
 * A claim or a download link that could not reach files at all (a restart, a container being
 * replaced) is sent again within `retryWindowMs` (@cs/lifecycle's retry window, which the gateway
 * uses too); once files has been unreachable for longer than that, calls fail at once until it
 * answers again.
 * A release is not: the outbox sends it again later, and a delete never waits for files.
 * A thumbnail link has a timeout of its own: files may wait up to 10 s for a worker to make it,
 * and answers 503 with Retry-After past that, which is passed on as it is.
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
  /** A link to the thumbnail of `size` of the key's image; files' 400 and 422 come back with its message. */
  thumbnailLink(key: string, size: string, authorization: string): Promise<{ url: string; expiresIn: number }>;
  release(key: string, authorization: string): Promise<void>;
}

export function createFilesClient({
  baseUrl,
  fetch,
  timeoutMs,
  thumbnailTimeoutMs = timeoutMs,
  retryWindowMs = 0,
}: {
  baseUrl: string;
  /** How files is reached (over the network, or in memory in one process). */
  fetch: Fetch;
  timeoutMs: number;
  /** How long a thumbnail link may take: files may make the thumbnail first. */
  thumbnailTimeoutMs?: number;
  retryWindowMs?: number;
}): FilesClient {
  /** Shared by every call: files being down is learnt once, not by each request. */
  const retries = createRetryWindow(retryWindowMs);
  const post = traced(fetch);

  function send(path: string, body: object, authorization: string, retry: boolean, waitMs: number): Promise<Response> {
    return retryWithin(
      retries,
      (err) => retry && notDelivered(err),
      () =>
        post(`${baseUrl}/internal/uploads/${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(waitMs),
        }),
    );
  }

  async function call(
    path: string,
    key: string,
    authorization: string,
    retry = true,
    { body = { key }, waitMs = timeoutMs, busy = false }: { body?: object; waitMs?: number; busy?: boolean } = {},
  ): Promise<Response> {
    let res: Response;
    try {
      res = await send(path, body, authorization, retry, waitMs);
    } catch (err) {
      throw new HttpError(503, messages.filesUnavailable, { cause: err, expose: true });
    }
    // Files' own "every worker is busy": its message and Retry-After are the caller's to see.
    const retryAfter = res.headers.get('retry-after');
    if (busy && res.status === 503 && retryAfter) {
      throw new HttpError(503, await errorOf(res), { headers: { 'Retry-After': retryAfter }, expose: true });
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

    async thumbnailLink(key, size, authorization) {
      const res = await call('thumbnail-link', key, authorization, true, {
        body: { key, size },
        waitMs: thumbnailTimeoutMs,
        busy: true,
      });
      if (res.status === 404) {
        await res.arrayBuffer();
        throw new HttpError(404, 'Attachment not found');
      }
      if (res.status === 400 || res.status === 422) throw new HttpError(res.status, await errorOf(res));
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
