/**
 * Files straight to storage; the bytes never pass through the API.
 * - Up to `multipartFrom` bytes: one signed PUT with exactly the headers the API returned
 *   (upload-single.ts).
 * - Larger: a multipart upload (upload-multipart.ts). Parts go up several at a time through links
 *   signed with their length, and a failed part is sent again after a backoff. Its id is
 *   remembered (upload-memo.ts: in localStorage when there is one) under the person, the file's
 *   name, size and date, so the same file started again, after a reload say, sends only the
 *   missing parts; `unfinished()` lists what is remembered, so that a page can offer to resume it.
 * Either can be paused (upload-control.ts): what is in flight is aborted, so that nothing goes out
 * while paused, and sent again on resume (a part whole, the one PUT from its first byte).
 * Browsers report upload progress only through XMLHttpRequest, so it is used where it exists;
 * elsewhere (Node) fetch sends each part, and progress counts whole parts (storage-put.ts).
 */
import { UploadAbortedError } from './errors.js';
import { lastingArea } from './lasting-area.js';
import { Control, type Progress } from './upload-control.js';
import { MEMO, recall } from './upload-memo.js';
import { inParts } from './upload-multipart.js';
import { inOne } from './upload-single.js';
import type { UnfinishedUpload, UploadApi, UploadOptions, UploadTask } from './upload-types.js';

const MIB = 1024 * 1024;
/** Files larger than this go up in parts unless `multipartFrom` says otherwise. */
export const MULTIPART_FROM = 16 * MIB;

/**
 * The extension of each media type the service accepts by default (its upload rules'
 * `allowedTypes`): the key of a Blob without a name takes it, as a file's takes its name's.
 */
const EXTENSIONS: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/gif': 'gif',
  'image/webp': 'webp',
  'application/pdf': 'pdf',
  'text/plain': 'txt',
  'application/json': 'json',
  'application/zip': 'zip',
};

/** The name of a Blob that has none: `file.png` for an `image/png`, `file` for a type not above. */
function nameless(contentType: string): string {
  const extension = EXTENSIONS[contentType.split(';')[0]?.trim().toLowerCase() ?? ''];
  return extension ? `file.${extension}` : 'file';
}

export function uploader(api: UploadApi) {
  const remembered = lastingArea();

  /** The remembered uploads of the signed-in person, each with its memo. */
  function mine(): (UnfinishedUpload & { memo: string })[] {
    const prefix = `${MEMO}${api.who()}:`;
    return remembered
      .keys()
      .filter((memo) => memo.startsWith(prefix))
      .flatMap((memo) => {
        const upload = recall(remembered.getItem(memo));
        return upload ? [{ ...upload, memo }] : [];
      });
  }

  return {
    /** What the signed-in person began here and did not finish (nor cancel). */
    unfinished(): UnfinishedUpload[] {
      return mine().map(({ uploadId, filename, size }) => ({ uploadId, filename, size }));
    },

    /** Gives up an unfinished upload: storage drops its parts, and it is no longer offered. */
    async discard(uploadId: string): Promise<void> {
      for (const { memo } of mine().filter((u) => u.uploadId === uploadId)) remembered.removeItem(memo);
      await api.abort(uploadId).catch((error: { status?: number }) => {
        if (error.status !== 404) throw error;
      });
    },

    start(file: Blob, options: UploadOptions): UploadTask {
      const control = new Control();
      const contentType = options.contentType ?? (file.type || 'application/octet-stream');
      const meta = {
        contentType,
        filename: options.filename ?? ((file as Partial<File>).name || nameless(contentType)),
      };
      let last = -1;
      const report: Progress = (sent) => {
        if (sent === last) return;
        last = sent;
        options.onProgress?.(sent, file.size);
      };
      const { signal } = options;
      let aborted = false;
      const onAbort = () => {
        aborted = true;
        control.stop();
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      const known: { uploadId?: string; memo?: string } = {};

      const done = (async () => {
        if (signal?.aborted) throw new UploadAbortedError();
        try {
          if (file.size <= (options.multipartFrom ?? MULTIPART_FROM))
            return await inOne(api, file, meta, report, control);
          return await inParts(api, remembered, file, meta, report, control, options.concurrency ?? 4, known);
        } catch (error) {
          if (aborted) {
            // Storage keeps nothing of an aborted upload, and it is not resumed.
            if (known.memo) remembered.removeItem(known.memo);
            if (known.uploadId) await api.abort(known.uploadId).catch(() => undefined);
            throw new UploadAbortedError();
          }
          throw error;
        } finally {
          signal?.removeEventListener('abort', onAbort);
        }
      })();

      return {
        done,
        pause: () => control.pause(),
        resume: () => control.resume(),
        get paused() {
          return control.paused;
        },
      };
    },
  };
}
