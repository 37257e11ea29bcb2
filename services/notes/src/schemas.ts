/** The notes resource's request rules (DESIGN.md), as ajv schemas with their messages. */
export const NOTE_LIMITS = { titleMax: 200, bodyMax: 100_000 } as const;

/** The shape of a key; the files service decides whether it is really the caller's. */
export const ATTACHMENT_KEY_PATTERN = '^uploads/[A-Za-z0-9-]{1,64}\\.[a-z0-9]{1,16}$';

const properties = {
  title: { type: 'string', pattern: '\\S', maxLength: NOTE_LIMITS.titleMax },
  body: { type: 'string', maxLength: NOTE_LIMITS.bodyMax },
  attachmentKey: { anyOf: [{ type: 'string', pattern: ATTACHMENT_KEY_PATTERN }, { type: 'null' }] },
} as const;

export const createNoteSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['title'],
  properties,
} as const;

export const updateNoteSchema = {
  type: 'object',
  additionalProperties: false,
  properties,
} as const;

export const messages = {
  titleRequired: `title is required and must be 1 to ${NOTE_LIMITS.titleMax} characters`,
  bodyInvalid: `body must be a string of at most ${NOTE_LIMITS.bodyMax} characters`,
  attachmentKeyInvalid: 'attachmentKey must be an upload key from /upload-url, or null',
  noSupportedFields: 'No supported fields to update (title, body, attachmentKey)',
  notFound: 'Note not found',
  noAttachment: 'Note has no attachment',
  filesUnavailable: 'File service unavailable',
  createFailed: 'Failed to create note',
  fetchFailed: 'Failed to fetch notes',
  updateFailed: 'Failed to update note',
  deleteFailed: 'Failed to delete note',
  attachmentFailed: 'Failed to create download link',
} as const;

export const noteMessages = {
  title: messages.titleRequired,
  body: messages.bodyInvalid,
  attachmentKey: messages.attachmentKeyInvalid,
} as const;
