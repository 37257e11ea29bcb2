/**
 * Where unfinished multipart uploads are remembered, so that the same file started again (after a
 * reload, say) sends only its missing parts.
 */
import type { UnfinishedUpload } from './upload-types.js';

export const MEMO = 'content-service.upload:';

/** Where unfinished multipart uploads are remembered: localStorage if there is one. */
export function resumeArea(): Pick<Storage, 'getItem' | 'setItem' | 'removeItem'> & { keys(): string[] } {
  if (typeof localStorage !== 'undefined') {
    const area = localStorage;
    return {
      getItem: (k) => area.getItem(k),
      setItem: (k, v) => area.setItem(k, v),
      removeItem: (k) => area.removeItem(k),
      keys: () => Array.from({ length: area.length }, (_, i) => area.key(i) ?? ''),
    };
  }
  const memory = new Map<string, string>();
  return {
    getItem: (k) => memory.get(k) ?? null,
    setItem: (k, v) => void memory.set(k, v),
    removeItem: (k) => void memory.delete(k),
    keys: () => [...memory.keys()],
  };
}

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

/** The remembered uploads (see resumeArea). */
export type ResumeArea = ReturnType<typeof resumeArea>;
