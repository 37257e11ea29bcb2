/**
 * Files straight to storage; the bytes never pass through the API.
 * - Up to `multipartFrom` bytes: one signed PUT with exactly the headers the API returned.
 * - Larger: a multipart upload. Parts go up several at a time through links signed with their
 *   length, and a failed part is sent again after a backoff. Its id is remembered (in
 *   localStorage when there is one) under the person, the file's name, size and date, so the same
 *   file started again, after a reload say, sends only the missing parts; `unfinished()` lists
 *   what is remembered, so that a page can offer to resume it.
 * Either can be paused: what is in flight is aborted, so that nothing goes out while paused, and
 * sent again on resume (a part whole, the one PUT from its first byte).
 * Browsers report upload progress only through XMLHttpRequest, so it is used where it exists;
 * elsewhere (Node) fetch sends each part, and progress counts whole parts.
 */
import { NetworkError, StorageError, UploadAbortedError } from './errors.js';
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

const MIB = 1024 * 1024;
/** Files larger than this go up in parts unless `multipartFrom` says otherwise. */
export const MULTIPART_FROM = 16 * MIB;
const PART_TRIES = 5;
const SIGN_BATCH = 8;

/** Pause and resume, and stop; both abort the PUTs in flight. */
class Control {
  paused = false;
  stopped = false;
  /** How many pauses there were: a PUT that ends with another count was aborted by one. */
  pauses = 0;
  private waiters: (() => void)[] = [];
  private inFlight = new Set<() => void>();

  /** Bytes would go on going out while the page says paused: the PUTs in flight are aborted. */
  pause(): void {
    if (this.paused || this.stopped) return;
    this.paused = true;
    this.pauses++;
    for (const abort of this.inFlight) abort();
  }

  resume(): void {
    this.paused = false;
    for (const wake of this.waiters.splice(0)) wake();
  }

  stop(): void {
    this.stopped = true;
    for (const abort of this.inFlight) abort();
    for (const wake of this.waiters.splice(0)) wake();
  }

  whileRunning(): Promise<void> {
    return this.paused && !this.stopped ? new Promise((resolve) => this.waiters.push(resolve)) : Promise.resolve();
  }

  track(abort: () => void): () => void {
    this.inFlight.add(abort);
    return () => this.inFlight.delete(abort);
  }
}

/** One PUT; its status, or 0 when no answer came (network, CORS, abort). */
function put(
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

const refused = (status: number) =>
  status === 0
    ? new NetworkError('Storage could not be reached (or did not allow this origin)', 'storage')
    : new StorageError(`Storage refused the upload (HTTP ${status})`, status);

// Its own sleep: this library runs in browsers, which have no `node:timers/promises`.
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

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

const MEMO = 'content-service.upload:';

/** Where unfinished multipart uploads are remembered: localStorage if there is one. */
function resumeArea(): Pick<Storage, 'getItem' | 'setItem' | 'removeItem'> & { keys(): string[] } {
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
type Remembered = UnfinishedUpload & { sent?: number[] };

/** A remembered upload: JSON, or (as first written) its bare id. */
function recall(value: string | null): Remembered | undefined {
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

export function uploader(api: UploadApi) {
  const remembered = resumeArea();

  async function inOne(
    file: Blob,
    meta: { contentType: string; filename: string },
    report: Progress,
    control: Control,
  ) {
    /** The link, while it serves: until a minute before it expires, and not after a pause. */
    let link: (Schemas['UploadLink'] & { until: number }) | undefined;
    for (;;) {
      await control.whileRunning();
      if (control.stopped) throw new UploadAbortedError();
      if (!link || link.until < Date.now()) {
        const issued = await api.link({ ...meta, size: file.size });
        link = { ...issued, until: Date.now() + (issued.expiresIn - 60) * 1000 };
      }
      // Paused while the link was issued: nothing is sent until resume.
      if (control.paused || control.stopped) continue;
      const pauses = control.pauses;
      const status = await put(link.url, file, link.headers, control, (loaded) => report(loaded));
      if (control.stopped) throw new UploadAbortedError();
      // 412: the link's one PUT already happened (its answer was lost); the claim checks the size.
      const stored = (status >= 200 && status < 300) || status === 412;
      if (!stored && control.pauses !== pauses) {
        // Paused: on resume the file goes again from its first byte, through a new link. Storage
        // may keep what a cut-off PUT sent (the test server does), and the old link's second PUT
        // would then get 412.
        link = undefined;
        report(0);
        continue;
      }
      if (!stored) throw refused(status);
      report(file.size);
      return link.key;
    }
  }

  async function inParts(
    file: Blob,
    meta: { contentType: string; filename: string },
    report: Progress,
    control: Control,
    concurrency: number,
    /** Filled in as soon as known, so that an abort can abort the upload in storage. */
    known: { uploadId?: string; memo?: string },
  ) {
    const lastModified = (file as Partial<File>).lastModified ?? 0;
    const memo = `${MEMO}${api.who()}:${meta.filename}:${file.size}:${lastModified}`;
    known.memo = memo;
    let upload: MultipartUpload | undefined;
    const earlier = recall(remembered.getItem(memo));
    if (earlier) {
      upload = await api.status(earlier.uploadId).catch((error: { status?: number }) => {
        // Gone (aborted, swept, or another person's): start again. Anything else is a failure.
        if (error.status !== 404) throw error;
        return undefined;
      });
      if (upload?.size !== file.size) upload = undefined;
    }
    /**
     * The parts storage answered with success, remembered with the upload. A part cut off in
     * flight (a pause, a reload) can be listed by storage all the same, at its full size though
     * only some of it arrived (versitygw does so): on resume only these are trusted, the others
     * are sent again. A memo written before they were kept trusts storage's list.
     */
    const trusted = upload ? earlier?.sent : [];
    if (!upload) upload = await api.createMultipart({ ...meta, size: file.size });
    const { uploadId, partSize, partCount } = upload;
    known.uploadId = uploadId;
    const lengthOf = (n: number) => Math.min(partSize, file.size - (n - 1) * partSize);
    const stored = new Set(
      (upload.parts ?? [])
        .filter((part) => part.size === lengthOf(part.partNumber) && (!trusted || trusted.includes(part.partNumber)))
        .map((part) => part.partNumber),
    );
    const sent = [...stored];
    const keep = () =>
      remembered.setItem(memo, JSON.stringify({ uploadId, filename: meta.filename, size: file.size, sent }));
    keep();
    const queue = upload.completed
      ? []
      : Array.from({ length: partCount }, (_, i) => i + 1).filter((n) => !stored.has(n));

    let doneBytes = [...stored].reduce((sum, n) => sum + lengthOf(n), 0);
    const inFlight = new Map<number, number>();
    const progress = () => report(doneBytes + [...inFlight.values()].reduce((a, b) => a + b, 0));
    progress();

    const links = new Map<number, { url: string; until: number }>();
    async function linkFor(n: number): Promise<string> {
      const cached = links.get(n);
      if (cached && cached.until > Date.now()) return cached.url;
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
      for (let failures = 0; ; ) {
        await control.whileRunning();
        if (control.stopped) return;
        const url = await linkFor(n);
        // Paused while the link was signed: nothing is sent until resume.
        if (control.paused) continue;
        const pauses = control.pauses;
        const status = await put(url, body, {}, control, (loaded) => {
          inFlight.set(n, loaded);
          progress();
        });
        inFlight.delete(n);
        const ok = status >= 200 && status < 300;
        if (ok) {
          doneBytes += body.size;
          sent.push(n);
          keep();
        }
        // A part that failed, or was aborted, takes its bytes back off the count.
        progress();
        if (ok || control.stopped) return;
        // Aborted by a pause: sent again, whole, on resume; that is no failure.
        if (control.pauses !== pauses) continue;
        // 403: most likely an expired link; sign it again.
        if (status === 403) links.delete(n);
        if (++failures >= PART_TRIES) throw refused(status);
        await sleep(Math.min(500 * 2 ** (failures - 1), 8000));
      }
    }

    const worker = async () => {
      for (let n = queue.shift(); n !== undefined && !control.stopped; n = queue.shift()) {
        try {
          await send(n);
        } catch (error) {
          control.stop();
          throw error;
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, queue.length) }, worker));
    if (control.stopped) throw new UploadAbortedError();
    const { key } = await api.complete(uploadId);
    remembered.removeItem(memo);
    report(file.size);
    return key;
  }

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
          if (file.size <= (options.multipartFrom ?? MULTIPART_FROM)) return await inOne(file, meta, report, control);
          return await inParts(file, meta, report, control, options.concurrency ?? 4, known);
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

type Progress = (sent: number) => void;
