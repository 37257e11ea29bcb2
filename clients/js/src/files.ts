/** Files: the upload rules, and uploads straight to storage through the API's signed links. */
import type { Calls, Raw } from './calls.js';
import type { SessionStore } from './session.js';
import { uploader } from './upload.js';
import type { UnfinishedUpload, UploadOptions, UploadTask } from './upload-types.js';

export function fileCalls(raw: Raw, run: Calls['run'], store: SessionStore) {
  const files = uploader({
    link: (body) => run(() => raw.POST('/upload-url', { body })),
    createMultipart: (body) => run(() => raw.POST('/api/multipart-uploads', { body })),
    status: (uploadId) => run(() => raw.GET('/api/multipart-uploads/{uploadId}', { params: { path: { uploadId } } })),
    signParts: (uploadId, partNumbers) =>
      run(() =>
        raw.POST('/api/multipart-uploads/{uploadId}/part-urls', {
          params: { path: { uploadId } },
          body: { partNumbers },
        }),
      ),
    complete: (uploadId) =>
      run(() => raw.POST('/api/multipart-uploads/{uploadId}/complete', { params: { path: { uploadId } } })),
    abort: (uploadId) => run(() => raw.DELETE('/api/multipart-uploads/{uploadId}', { params: { path: { uploadId } } })),
    who: () => store.load()?.email ?? '',
  });

  return {
    /** What an upload may be: the allowed media types and the size limits (public). */
    uploadRules: () => run(() => raw.GET('/api/upload-rules')),
    /**
     * Sends a file straight to storage and gives its key: one signed PUT, or parts (4 at a time,
     * retried, resumable) above `multipartFrom` bytes. `onProgress` counts bytes; `signal` aborts.
     */
    upload: (file: Blob, uploadOptions: UploadOptions = {}): Promise<string> => files.start(file, uploadOptions).done,
    /** The same, with pause and resume. */
    startUpload: (file: Blob, uploadOptions: UploadOptions = {}): UploadTask => files.start(file, uploadOptions),
    /** Large uploads the signed-in person began in this browser and did not finish: choosing the same file resumes one. */
    unfinishedUploads: (): UnfinishedUpload[] => files.unfinished(),
    /** Gives up an unfinished upload: storage drops its parts. */
    discardUpload: (uploadId: string): Promise<void> => files.discard(uploadId),
  };
}
