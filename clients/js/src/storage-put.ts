/**
 * One PUT of bytes to storage, through a signed link. Browsers report upload progress only through
 * XMLHttpRequest, so it is used where it exists; elsewhere (Node) fetch sends the bytes, and
 * progress counts them whole when they arrive.
 */
import { NetworkError, StorageError } from './errors.js';
import type { Control } from './upload-control.js';

/** One PUT; its status, or 0 when no answer came (network, CORS, abort). */
export function put(
  url: string,
  body: Blob,
  headers: Record<string, string>,
  control: Control,
  onLoaded: (loaded: number) => void,
): Promise<number> {
  if (typeof XMLHttpRequest === 'undefined') {
    const aborter = new AbortController();
    const untrack = control.track(() => aborter.abort());
    return fetch(url, { method: 'PUT', headers, body, signal: aborter.signal })
      .then(async (res) => {
        await res.arrayBuffer();
        if (res.ok) onLoaded(body.size);
        return res.status;
      })
      .catch(() => 0)
      .finally(untrack);
  }
  return new Promise((resolve) => {
    const xhr = new XMLHttpRequest();
    const untrack = control.track(() => xhr.abort());
    xhr.open('PUT', url);
    for (const [name, value] of Object.entries(headers)) {
      // The browser sets Content-Length itself and refuses to let scripts set it.
      if (name.toLowerCase() !== 'content-length') xhr.setRequestHeader(name, value);
    }
    xhr.upload.addEventListener('progress', (event) => onLoaded(event.loaded));
    const done = (status: number) => () => {
      untrack();
      resolve(status);
    };
    xhr.addEventListener('load', () => done(xhr.status)());
    for (const failure of ['error', 'abort', 'timeout']) xhr.addEventListener(failure, done(0));
    xhr.send(body);
  });
}

export const refused = (status: number) =>
  status === 0
    ? new NetworkError('Storage could not be reached (or did not allow this origin)', 'storage')
    : new StorageError(`Storage refused the upload (HTTP ${status})`, status);
