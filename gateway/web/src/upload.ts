/**
 * Sending a file straight to storage; the bytes never pass through our servers.
 * - Up to MULTIPART_FROM: one signed PUT with exactly the headers the API returned.
 * - Larger: a multipart upload. Parts go up several at a time through links signed with their
 *   length, a failed part is sent again after a backoff, and the upload can be paused, resumed
 *   and cancelled. The upload's id is kept in localStorage under the file's name, size and date,
 *   so after a reload the same file picked again sends only the parts storage does not hold yet.
 * XMLHttpRequest rather than fetch, because only it reports upload progress.
 */
import { ApiError, api, type MultipartUpload } from './api';
import { currentSession } from './session';

/** Files larger than this go up in parts. */
export const MULTIPART_FROM = 16 * 1024 * 1024;
/** Parts in flight at once. */
const CONCURRENCY = 4;
/** Tries of one part before the upload fails (it can still be resumed). */
const PART_TRIES = 5;
/** Part links asked for at a time; each is used well within its lifetime. */
const SIGN_BATCH = 8;

export type Progress = (sent: number, total: number) => void;

/** Pause, resume and cancel for a running upload; `cancel` aborts it in storage too. */
export class UploadControl {
  paused = false;
  cancelled = false;
  private waiters: (() => void)[] = [];
  private inFlight = new Set<XMLHttpRequest>();
  /** Called when the state changes, so the page can relabel its buttons. */
  onChange: () => void = () => {};

  pause(): void {
    this.paused = true;
    for (const xhr of this.inFlight) xhr.abort();
    this.onChange();
  }

  resume(): void {
    this.paused = false;
    for (const wake of this.waiters.splice(0)) wake();
    this.onChange();
  }

  cancel(): void {
    this.cancelled = true;
    this.stop();
  }

  /** Cancelled, or failed: nothing more is sent. */
  get stopped(): boolean {
    return this.cancelled || this.halted;
  }

  /** Stops every part at once (one failed for good); the upload can still be resumed later. */
  halt(): void {
    this.halted = true;
    this.stop();
  }

  private halted = false;

  private stop(): void {
    for (const xhr of this.inFlight) xhr.abort();
    for (const wake of this.waiters.splice(0)) wake();
    this.onChange();
  }

  /** Resolves at once, or when a paused upload is resumed (or stopped). */
  whileRunning(): Promise<void> {
    return this.paused && !this.stopped ? new Promise((resolve) => this.waiters.push(resolve)) : Promise.resolve();
  }

  track(xhr: XMLHttpRequest): () => void {
    this.inFlight.add(xhr);
    return () => this.inFlight.delete(xhr);
  }
}

export const CANCELLED = 'The upload was cancelled.';
const UNREACHABLE =
  'The file could not be sent to storage. Storage did not accept an upload from this page, or could not be reached.';

/** Content types the files service accepts by default; anything else is sent as a generic binary. */
function contentTypeOf(file: File): string {
  return file.type || 'application/octet-stream';
}

export async function uploadFile(file: File, onProgress: Progress, control = new UploadControl()): Promise<string> {
  return file.size > MULTIPART_FROM ? uploadInParts(file, onProgress, control) : uploadInOne(file, onProgress, control);
}

/** What one PUT came to: its status, or 0 when it never got an answer (network, CORS, abort). */
function put(
  url: string,
  body: Blob,
  headers: Record<string, string>,
  control: UploadControl,
  onLoaded: (loaded: number) => void,
): Promise<number> {
  return new Promise((resolve) => {
    const xhr = new XMLHttpRequest();
    const untrack = control.track(xhr);
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

async function uploadInOne(file: File, onProgress: Progress, control: UploadControl): Promise<string> {
  const link = await api.uploadLink({ contentType: contentTypeOf(file), filename: file.name, size: file.size });
  const status = await put(link.url, file, link.headers, control, (loaded) => onProgress(loaded, file.size));
  if (control.cancelled) throw new ApiError(CANCELLED, 0);
  // 412: the link's one PUT already happened (its answer was lost): the object is there, and the
  // claim checks its size.
  if ((status >= 200 && status < 300) || status === 412) {
    onProgress(file.size, file.size);
    return link.key;
  }
  if (status === 0) throw new ApiError(UNREACHABLE, 0);
  throw new ApiError(`Storage refused the file (HTTP ${status}). Please try again.`, status);
}

/** Where an unfinished upload of this file is remembered, per person. */
function resumeKey(file: File): string {
  const who = currentSession()?.email ?? '';
  return `content-service.upload:${who}:${file.name}:${file.size}:${file.lastModified}`;
}

/** The unfinished upload of this very file, if storage still has it; else a new one. */
async function findOrCreate(file: File): Promise<MultipartUpload> {
  const remembered = localStorage.getItem(resumeKey(file));
  if (remembered) {
    try {
      const upload = await api.multipartStatus(remembered);
      if (upload.size === file.size) return upload;
    } catch (error) {
      // Gone (aborted, swept, or another person's): start again. Anything else is a real failure.
      if ((error as ApiError).status !== 404) throw error;
    }
    localStorage.removeItem(resumeKey(file));
  }
  const upload = await api.createMultipart({ contentType: contentTypeOf(file), filename: file.name, size: file.size });
  localStorage.setItem(resumeKey(file), upload.uploadId);
  return { ...upload, parts: [] };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function uploadInParts(file: File, onProgress: Progress, control: UploadControl): Promise<string> {
  const upload = await findOrCreate(file);
  const { uploadId, partSize, partCount } = upload;
  const lengthOf = (n: number) => Math.min(partSize, file.size - (n - 1) * partSize);
  const stored = new Set((upload.parts ?? []).map((part) => part.partNumber));
  const pending = upload.completed ? [] : range(1, partCount).filter((n) => !stored.has(n));
  /** The parts not yet taken by a worker. */
  const queue = [...pending];

  // Progress over all the bytes: parts storage holds, and what is in flight now.
  let doneBytes = [...stored].reduce((sum, n) => sum + lengthOf(n), 0);
  const inFlight = new Map<number, number>();
  const report = () => onProgress(doneBytes + [...inFlight.values()].reduce((a, b) => a + b, 0), file.size);
  report();

  // Links, signed a batch at a time for the parts about to go, and again when one has expired.
  const links = new Map<number, { url: string; until: number }>();
  async function linkFor(n: number): Promise<string> {
    const known = links.get(n);
    if (known && known.until > Date.now()) return known.url;
    // This part, and the next ones still to go.
    const batch = [n, ...queue.filter((p) => !links.has(p))].slice(0, SIGN_BATCH);
    const signed = await api.signParts(uploadId, batch);
    // Used no later than a minute before they expire.
    const until = Date.now() + (signed.expiresIn - 60) * 1000;
    for (const part of signed.parts) links.set(part.partNumber, { url: part.url, until });
    return links.get(n)?.url ?? '';
  }

  async function send(n: number): Promise<void> {
    const start = (n - 1) * partSize;
    const body = file.slice(start, start + lengthOf(n));
    for (let attempt = 1; ; attempt++) {
      await control.whileRunning();
      if (control.stopped) return;
      const status = await put(await linkFor(n), body, {}, control, (loaded) => {
        inFlight.set(n, loaded);
        report();
      });
      inFlight.delete(n);
      if (status >= 200 && status < 300) doneBytes += body.size;
      // A part that failed or was paused takes its bytes back off the bar.
      report();
      if (status >= 200 && status < 300) return;
      if (control.stopped) return;
      // Paused: the aborted part goes again on resume, without counting as a failure.
      if (control.paused && status === 0) {
        attempt -= 1;
        continue;
      }
      // 403: most likely an expired link; sign it again.
      if (status === 403) links.delete(n);
      if (attempt >= PART_TRIES) {
        throw new ApiError(
          status === 0 ? UNREACHABLE : `Storage refused part ${n} of the file (HTTP ${status}). Please try again.`,
          status,
        );
      }
      await sleep(Math.min(500 * 2 ** (attempt - 1), 8000));
    }
  }

  const worker = async () => {
    for (let n = queue.shift(); n !== undefined && !control.stopped; n = queue.shift()) {
      try {
        await send(n);
      } catch (error) {
        control.halt();
        throw error;
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, queue.length) }, worker));
  } finally {
    if (control.cancelled) {
      localStorage.removeItem(resumeKey(file));
      await api.abortMultipart(uploadId).catch(() => undefined);
    }
  }
  if (control.cancelled) throw new ApiError(CANCELLED, 0);
  const { key } = await api.completeMultipart(uploadId);
  localStorage.removeItem(resumeKey(file));
  onProgress(file.size, file.size);
  return key;
}

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}
