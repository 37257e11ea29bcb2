/**
 * Where unfinished multipart uploads are remembered, so that the same file started again (after a
 * reload, say) sends only its missing parts. They are kept in the lasting area (lasting-area.ts).
 */
import type { UnfinishedUpload } from './upload-types.js';

export const MEMO = 'content-service.upload:';

/** A remembered upload, and the parts storage took (`sent`, since pause cuts parts off). */
export type Remembered = UnfinishedUpload & { sent?: number[] };

/** A remembered upload: JSON, or (as first written) its bare id. */
export function recall(value: string | null): Remembered | undefined {
  if (!value) return undefined;
  try {
    const { uploadId, filename, size, sent } = JSON.parse(value) as Remembered;
    return typeof uploadId === 'string'
      ? { uploadId, filename: String(filename), size: Number(size), ...(Array.isArray(sent) ? { sent } : {}) }
      : undefined;
  } catch {
    return { uploadId: value, filename: '', size: 0 };
  }
}
