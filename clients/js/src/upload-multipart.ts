/**
 * A file larger than `multipartFrom` bytes: a multipart upload. Parts go up several at a time
 * through links signed with their length, and a failed part is sent again after a backoff. Its id
 * is remembered (upload-memo.ts) under the person, the file's name, size and date, so the same file
 * started again, after a reload say, sends only the missing parts. Paused, the parts in flight are
 * aborted and sent again, whole, on resume.
 */
import { UploadAbortedError } from './errors.js';
import type { LastingArea } from './lasting-area.js';
import type { components } from './schema.js';
import { put, refused } from './storage-put.js';
import type { Control, Progress } from './upload-control.js';
import { MEMO, recall } from './upload-memo.js';
import type { UploadApi } from './upload-types.js';

type MultipartUpload = components['schemas']['MultipartUpload'];

const PART_TRIES = 5;
const SIGN_BATCH = 8;

// Its own sleep: this library runs in browsers, which have no `node:timers/promises`.
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function inParts(
  api: UploadApi,
  remembered: LastingArea,
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
