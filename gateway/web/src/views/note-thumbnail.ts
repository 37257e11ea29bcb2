/**
 * A small picture of a note's image file in the list: a thumbnail the API makes (`?thumb=`), never
 * the full image. Its link is on storage's origin, and the page's Content-Security-Policy takes
 * images only from its own origin, `data:` and `blob:`; so the thumbnail is fetched (storage allows
 * this origin's GETs) and shown from a blob of its bytes. When it cannot be had, it is left out:
 * the file's name and its download button are still there.
 */
import { api, type Note } from '../api';
import { h } from '../dom';

/** The types the API makes thumbnails of. */
const IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);
/** One of the sizes the API allows by default (THUMB_SIZES): a square cropped to the centre. */
const SIZE = 100;

export function noteThumbnail(note: Note): HTMLImageElement | null {
  const { attachment } = note;
  if (!attachment || !IMAGE_TYPES.has(attachment.contentType)) return null;
  const img = h('img', {
    class: 'thumbnail',
    alt: `Thumbnail of ${attachment.filename}`,
    width: String(SIZE),
    height: String(SIZE),
  });
  void (async () => {
    try {
      const { url } = await api.attachmentLink(note._id, { thumb: `${SIZE}x${SIZE}` });
      const res = await fetch(url);
      if (!res.ok) throw new Error(`storage answered ${res.status}`);
      const shown = URL.createObjectURL(await res.blob());
      // Once drawn, the image keeps its pixels: the blob's memory is given back.
      img.addEventListener('load', () => URL.revokeObjectURL(shown), { once: true });
      img.src = shown;
    } catch {
      img.remove();
    }
  })();
  return img;
}
