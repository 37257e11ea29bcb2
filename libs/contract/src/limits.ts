/**
 * Every limit and identifier pattern of the API, each written once. The request schemas, the
 * OpenAPI document, the services' own checks and the messages that name a limit all read them
 * from here.
 */

export const LIMITS = {
  emailMax: 254,
  /** A display name's length once trimmed, in characters. */
  displayNameMax: 50,
  /** The ids one `GET /api/users` may ask about. */
  userIdsMax: 50,
  passwordMin: 8,
  /** bcrypt ignores everything after 72 bytes, so a longer password would silently be cut. */
  passwordMaxBytes: 72,
  postTitleMax: 200,
  postBodyMin: 10,
  postBodyMax: 50_000,
  postTagsMax: 10,
  tagMax: 40,
  /** The public list of posts: a page's size when none is asked for, and the largest. */
  postsPageDefault: 20,
  postsPageMax: 50,
  noteTitleMax: 200,
  noteBodyMax: 100_000,
  filenameMax: 1024,
  /** An upload key's extension: the filename's, when it is 1 to this many letters or digits. */
  extensionMax: 16,
  /** Part links signed by one request. */
  partsPerSigning: 100,
  /** Parts of one multipart upload, as storage allows them. */
  partsMax: 10_000,
  /** The caller's notes, one page: the default size, and the largest a client may ask for. */
  notesPageDefault: 20,
  notesPageMax: 100,
  /**
   * The caller's posts, one page. Without `limit` the contract's list of every post is kept, up
   * to this many: a person with more gets the rest through the Link header.
   */
  myPostsPageMax: 100,
  /** A search (`q`): its length in characters, and its words (a quoted phrase's count one each). */
  searchQueryMax: 200,
  searchWordsMax: 10,
} as const;

/**
 * White space as JavaScript's `\s` and `trim()` take it (Unicode's White_Space but U+0085, and
 * U+FEFF), as a regex class's contents. The patterns say it so rather than with `\s` or `\S`,
 * which each engine fills by its own rules (schemathesis reads ASCII's six only, Python's `re` also
 * U+001C–U+001F and U+0085, Rust's U+0085): a tool of another language, such as a fuzzer drawing
 * valid data, read the document's rules as other than the ones validation applies. JavaScript
 * reads this class exactly as its `\s`.
 */
export const WHITE_SPACE =
  '\\t\\n\\u000b\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff';
const SPACES = `[${WHITE_SPACE}]*`;
/** A record identifier as the database writes it: 24 hex digits (either case). */
export const OBJECT_ID_PATTERN = '^[0-9a-fA-F]{24}$';
/**
 * `GET /api/users?ids=`: record ids, comma-separated, spaces around each allowed (they are
 * trimmed). How many distinct ones a request may name (LIMITS.userIdsMax) is counted after
 * duplicates are dropped, which a pattern cannot say.
 */
export const USER_IDS_PATTERN = `^${SPACES}[0-9a-fA-F]{24}${SPACES}(?:,${SPACES}[0-9a-fA-F]{24}${SPACES})*$`;
/**
 * Control and format characters (line breaks, bidirectional overrides, zero-width joiners and
 * spaces, soft hyphens), and line and paragraph separators, as a regex class's contents. BMP
 * ranges written out rather than `\p{…}`, which the validators of other languages do not all read.
 */
const CONTROL_OR_FORMAT =
  '\\u0000-\\u001f\\u007f-\\u009f\\u00ad\\u0600-\\u0605\\u061c\\u06dd\\u070f\\u0890\\u0891\\u08e2\\u180e\\u200b-\\u200f\\u2028-\\u202e\\u2060-\\u2064\\u2066-\\u206f\\ufeff\\ufff9-\\ufffb';
/** A display name: 1 to `LIMITS.displayNameMax` characters once trimmed, none a control or format character. */
export const DISPLAY_NAME_PATTERN = `^${SPACES}[^${WHITE_SPACE}${CONTROL_OR_FORMAT}](?:[^${CONTROL_OR_FORMAT}]{0,${LIMITS.displayNameMax - 2}}[^${WHITE_SPACE}${CONTROL_OR_FORMAT}])?${SPACES}$`;
/** A tag as a client may send it (any case: it is lowercased before use)... */
export const TAG_PATTERN = `^[A-Za-z0-9-]{1,${LIMITS.tagMax}}$`;
/** ...and as it is stored and answered. */
export const STORED_TAG_PATTERN = `^[a-z0-9-]{1,${LIMITS.tagMax}}$`;
/**
 * Something that looks like an e-mail address, spaces around it allowed (they are trimmed). No
 * control character (C0, C1), no format character of the Basic Multilingual Plane (U+00AD,
 * U+200B–U+200F, U+202A–U+202E, U+2060–U+206F, U+FEFF, …: an address that reads like another),
 * and no U+FFFD (what undecodable bytes become): different inputs, one account. Written as ranges
 * rather than Unicode properties, so that every JSON Schema tool reads it (a fuzzer's regex engine
 * has no `\p{…}`). A lone surrogate is refused too, but not here: the regex engines of other
 * languages (Rust's, which schemathesis validates with) work on code points and cannot compile a
 * surrogate range, so they dropped the whole pattern; the schemas say it with `x-wellFormed`.
 */
const NOT_IN_ADDRESS = [
  `${WHITE_SPACE}@`,
  '\\u0000-\\u001F\\u007F-\\u009F',
  '\\u00AD\\u0600-\\u0605\\u061C\\u06DD\\u070F\\u08E2\\u180E',
  '\\u200B-\\u200F\\u202A-\\u202E\\u2060-\\u2064\\u2066-\\u206F',
  '\\uFEFF\\uFFF9-\\uFFFB\\uFFFD',
].join('');
export const EMAIL_PATTERN = `^${SPACES}[^${NOT_IN_ADDRESS}]+@[^${NOT_IN_ADDRESS}]+${SPACES}$`;
/** Not empty and not only spaces. */
export const NOT_BLANK_PATTERN = `[^${WHITE_SPACE}]`;

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
const EXTENSION = `[a-z0-9]{1,${LIMITS.extensionMax}}`;
/** A multipart upload's id: the random UUID of its key, lowercase as generated. */
export const UPLOAD_ID_PATTERN = `^${UUID}$`;
/** The extension of an upload key. */
export const EXTENSION_PATTERN = `^${EXTENSION}$`;
/** The contract's upload key, `uploads/<uuid>.<extension>`; the files service decides whether it is the caller's. */
export const UPLOAD_KEY_PATTERN = `^uploads/${UUID}\\.${EXTENSION}$`;
