/**
 * A thumbnail's size, in PocketBase's syntax: `WxH` crops to the centre, `WxHt` and `WxHb` crop
 * from the top and from the bottom, `WxHf` fits inside without cropping, `0xH` and `Wx0` keep the
 * proportions at that height or width. Only the sizes configured (THUMB_SIZES) are made, so a
 * caller cannot fill storage with every size there is.
 */
export type ThumbFit = 'centre' | 'top' | 'bottom' | 'inside';

export interface ThumbSize {
  /** The size as written, and as it is kept in the thumbnail's key. */
  text: string;
  /** 0 when only the height is given. */
  width: number;
  /** 0 when only the width is given. */
  height: number;
  fit: ThumbFit;
}

/** The largest side a thumbnail may ask for: a thumbnail is small by definition. */
export const MAX_THUMB_SIDE = 4096;
const SIZE = /^(\d{1,4})x(\d{1,4})([tbf]?)$/;
const FITS: Record<string, ThumbFit> = { '': 'centre', t: 'top', b: 'bottom', f: 'inside' };

/** The size `text` means, or undefined when it is not one (`0x0`, a letter on a one-sided size). */
export function parseThumbSize(text: string): ThumbSize | undefined {
  const match = SIZE.exec(text);
  if (!match) return undefined;
  const [, w, h, suffix = ''] = match;
  const width = Number(w);
  const height = Number(h);
  if (width > MAX_THUMB_SIDE || height > MAX_THUMB_SIDE) return undefined;
  if (width === 0 && height === 0) return undefined;
  // A one-sided size has nothing to crop or fit: PocketBase takes no letter there either.
  if ((width === 0 || height === 0) && suffix !== '') return undefined;
  return { text, width, height, fit: FITS[suffix] as ThumbFit };
}

/** The configured sizes, read once at boot; a size that is not one stops the boot, naming it. */
export function allowedThumbSizes(texts: readonly string[]): ReadonlyMap<string, ThumbSize> {
  const sizes = new Map<string, ThumbSize>();
  for (const text of texts) {
    const size = parseThumbSize(text);
    if (!size) throw new Error(`THUMB_SIZES: "${text}" is not a size (WxH, WxHt, WxHb, WxHf, 0xH or Wx0)`);
    sizes.set(text, size);
  }
  return sizes;
}
