/**
 * A file up to `multipartFrom` bytes: one signed PUT with exactly the headers the API returned.
 * Paused, the PUT in flight is aborted, and on resume the file goes again from its first byte.
 */
import { UploadAbortedError } from './errors.js';
import type { components } from './schema.js';
import { put, refused } from './storage-put.js';
import type { Control, Progress } from './upload-control.js';
import type { UploadApi } from './upload-types.js';

type Schemas = components['schemas'];

export async function inOne(
  api: UploadApi,
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
