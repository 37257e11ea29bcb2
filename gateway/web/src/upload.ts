/**
 * Sending a file straight to storage: ask the API for a signed link, then PUT the bytes to it
 * with exactly the headers the API returned. The bytes never pass through our servers.
 * XMLHttpRequest rather than fetch, because only it reports upload progress.
 */
import { ApiError, api } from './api';

/** Content types the files service accepts by default; anything else is sent as a generic binary. */
function contentTypeOf(file: File): string {
  return file.type || 'application/octet-stream';
}

export async function uploadFile(file: File, onProgress: (sent: number, total: number) => void): Promise<string> {
  const link = await api.uploadLink({ contentType: contentTypeOf(file), filename: file.name, size: file.size });
  await new Promise<void>((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('PUT', link.url);
    for (const [name, value] of Object.entries(link.headers)) {
      // The browser sets Content-Length itself and refuses to let scripts set it.
      if (name.toLowerCase() !== 'content-length') xhr.setRequestHeader(name, value);
    }
    xhr.upload.addEventListener('progress', (event) =>
      onProgress(event.loaded, event.lengthComputable ? event.total : file.size),
    );
    xhr.addEventListener('load', () => {
      if (xhr.status >= 200 && xhr.status < 300) {
        onProgress(file.size, file.size);
        resolve();
      } else {
        reject(new ApiError(`Storage refused the file (HTTP ${xhr.status}). Please try again.`, xhr.status));
      }
    });
    const failed = () =>
      reject(
        new ApiError(
          'The file could not be sent to storage. Storage did not accept an upload from this page, or could not be reached.',
          0,
        ),
      );
    xhr.addEventListener('error', failed);
    xhr.addEventListener('abort', failed);
    xhr.addEventListener('timeout', failed);
    xhr.send(file);
  });
  return link.key;
}
