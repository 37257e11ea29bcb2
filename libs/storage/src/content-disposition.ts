/**
 * `Content-Disposition: attachment` naming a download, per RFC 6266: `filename*` carries the
 * name exactly, in UTF-8 and percent-encoded as RFC 8187 (formerly 5987) says, for every browser
 * since 2011; `filename` carries an ASCII stand-in for any other reader. Neither can break out of
 * its parameter: the stand-in has no quote, backslash, percent sign or control, and the encoded
 * name only letters, digits, the backquote and `!#$&+-.^_|~`. Control characters are the caller's
 * to remove first (they are replaced here, never sent).
 */
/** One `_` for each character (code point) the ASCII stand-in cannot hold as it is. */
const NOT_PLAIN_ASCII = /[^\x20-\x7e]|["\\%]/gu;
/** RFC 8187's attr-char; the backquote written `\x60`, so no text tool reads it as a template literal's start. */
const NOT_ATTR_CHAR = /[^A-Za-z0-9!#$&+\-.^_\x60|~]/gu;

function percentEncoded(character: string): string {
  return Array.from(
    Buffer.from(character, 'utf8'),
    (byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`,
  ).join('');
}

export function attachmentDisposition(filename: string): string {
  const fallback = filename.replace(NOT_PLAIN_ASCII, '_');
  const exact = filename.replace(NOT_ATTR_CHAR, percentEncoded);
  return `attachment; filename="${fallback}"; filename*=UTF-8''${exact}`;
}
