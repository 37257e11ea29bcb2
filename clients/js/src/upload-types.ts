/** What an upload takes and gives, and the API calls it makes: the types its parts share. */
import type { components } from './schema.js';

type Schemas = components['schemas'];
type MultipartUpload = Schemas['MultipartUpload'];

export interface UploadOptions {
  /** Bytes sent so far, of `total`. */
  onProgress?: (sent: number, total: number) => void;
  /** Aborts the upload; a multipart upload is aborted in storage too. */
  signal?: AbortSignal;
  /** The media type; the file's own, or application/octet-stream. */
  contentType?: string;
  /**
   * The name whose extension the key gets; a File's own name otherwise, and for a Blob without
   * one, `file` with its type's extension (`file.png` for `image/png`).
   */
  filename?: string;
  /** Files larger than this go up in parts (16 MiB by default). */
  multipartFrom?: number;
  /** Parts in flight at once (4 by default). */
  concurrency?: number;
}

/** An upload under way: its key when `done`, and pause/resume while it runs. */
export interface UploadTask {
  done: Promise<string>;
  /**
   * Nothing is sent until `resume`: the PUTs in flight are aborted. Resume sends a file in parts'
   * missing parts, and a file in one PUT again from its first byte.
   */
  pause(): void;
  resume(): void;
  readonly paused: boolean;
}

/** A multipart upload begun in this browser and not finished: the same file, chosen again, resumes it. */
export interface UnfinishedUpload {
  uploadId: string;
  filename: string;
  size: number;
}

/** The API calls an upload needs (typed by the client that builds them). */
export interface UploadApi {
  link(body: { contentType: string; filename: string; size: number }): Promise<Schemas['UploadLink']>;
  createMultipart(body: { contentType: string; filename: string; size: number }): Promise<MultipartUpload>;
  status(uploadId: string): Promise<MultipartUpload>;
  signParts(uploadId: string, partNumbers: number[]): Promise<Schemas['PartLinks']>;
  complete(uploadId: string): Promise<Schemas['CompletedUpload']>;
  abort(uploadId: string): Promise<unknown>;
  /** Whose uploads are remembered (the session's e-mail). */
  who(): string;
}
