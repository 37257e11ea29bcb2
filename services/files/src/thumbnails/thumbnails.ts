/**
 * Thumbnails of image attachments: a link to one, made on the first request for its size and
 * kept in storage (`thumbs/<key>/<size>`, thumbnail-key.ts); later requests only sign a link. The
 * caller must own the attached upload, as for its download link (uploads.ts `signDownload`).
 *
 * Making one reads the original from storage and writes the thumbnail back: unlike uploads and
 * downloads, these bytes pass through this process. So the work is bounded (thumbnail-work.ts),
 * an original larger than a single PUT takes (UPLOAD_MAX_BYTES) is not read at all, and an image
 * over THUMB_MAX_PIXELS is refused before it is decoded (make-thumbnail.ts).
 *
 * A removal deletes the original first and then lists its thumbnails (delete-upload-object.ts).
 * A thumbnail is written and only then is its original looked for: gone, the thumbnail is deleted
 * again, so one made while its original was being removed never outlives it.
 */
import { HttpError } from '@cs/errors';
import type { ObjectStorage } from '@cs/storage';
import { counter } from '@cs/telemetry';
import { messages } from '../messages';
import { filenameOf } from '../uploads/file-name';
import type { Read, Records } from '../uploads/records';
import { createKnownThumbnails } from './known-thumbnails';
import { isThumbnailType, makeThumbnail, THUMBNAIL_TYPES, type ThumbnailType } from './make-thumbnail';
import { allowedThumbSizes, type ThumbSize } from './thumb-size';
import { thumbnailKey } from './thumbnail-key';
import { createThumbnailWork } from './thumbnail-work';

export const thumbnailsMade = counter(
  'thumbnails_made_total',
  'Thumbnails made and written to storage (a request that found one made only signs a link).',
);

/** Thumbnails one replica remembers are in storage (known-thumbnails.ts): a few hundred kB. */
const KNOWN_MAX = 10_000;

export interface ThumbnailSettings {
  /** THUMB_SIZES: the sizes that may be asked for. */
  sizes: readonly string[];
  workers: number;
  /** How long a request waits for a worker before 503. */
  maxWaitMs: number;
  maxPixels: number;
  /** The largest original read to make a thumbnail of. */
  maxBytes: number;
  /** A link's life, as a download link's. */
  linkTtlS: number;
}

export function createThumbnails({
  records,
  storage,
  settings,
}: {
  records: Records;
  storage: ObjectStorage;
  settings: ThumbnailSettings;
}) {
  const allowed = allowedThumbSizes(settings.sizes);
  const work = createThumbnailWork({ workers: settings.workers, maxWaitMs: settings.maxWaitMs });
  const known = createKnownThumbnails(KNOWN_MAX);
  const gone = () => new HttpError(404, 'File not found');

  async function make(record: Read & { contentType: ThumbnailType }, size: ThumbSize, key: string) {
    const original = await storage.headObject(record.key);
    if (!original) throw gone();
    if (original.size > settings.maxBytes) throw new HttpError(422, messages.thumbnailFileTooLarge(settings.maxBytes));
    const bytes = await storage.getObject(record.key);
    const thumbnail = await makeThumbnail(bytes, record.contentType, size, settings.maxPixels);
    await storage.putObject(key, thumbnail, record.contentType);
    thumbnailsMade.inc();
    if (!(await storage.headObject(record.key))) {
      await storage.deleteObject(key);
      throw gone();
    }
  }

  return {
    /** The sizes that may be asked for, in the order configured. */
    sizes: [...allowed.keys()],

    /** A GET link to the thumbnail of `size` of an attached image of the caller's, made first if it is not yet. */
    async link(ownerId: string, uploadKey: string, sizeText: string) {
      const size = allowed.get(sizeText);
      if (!size) throw new HttpError(400, messages.thumbSizeNotAllowed([...allowed.keys()]));
      const record = await records.owned(ownerId, uploadKey);
      if (record.state !== 'attached') throw new HttpError(404, messages.uploadNotFound);
      const { contentType } = record;
      if (!isThumbnailType(contentType)) throw new HttpError(400, messages.thumbTypeNotAllowed(THUMBNAIL_TYPES));
      const key = thumbnailKey(uploadKey, size.text);
      if (!known.has(key)) {
        await work.once(key, async () => {
          if (await storage.headObject(key)) return;
          await work.make(ownerId, () => make({ ...record, contentType }, size, key));
        });
        known.add(key);
      }
      const url = await storage.signGet(key, {
        expiresIn: settings.linkTtlS,
        contentType,
        filename: filenameOf(record),
      });
      return { url, expiresIn: settings.linkTtlS };
    },
  };
}

export type Thumbnails = ReturnType<typeof createThumbnails>;
