/**
 * The notes resource's messages. The request schemas are the OpenAPI document's own
 * (`@cs/contract`), so validation and the document cannot drift.
 */
import { createNoteSchema, LIMITS, updateNoteSchema } from '@cs/contract';

export { createNoteSchema, updateNoteSchema };
export const NOTE_LIMITS = { titleMax: LIMITS.noteTitleMax, bodyMax: LIMITS.noteBodyMax } as const;

export const messages = {
  titleRequired: `title is required and must be 1 to ${NOTE_LIMITS.titleMax} characters`,
  bodyInvalid: `body must be a string of at most ${NOTE_LIMITS.bodyMax} characters`,
  attachmentKeyInvalid: 'attachmentKey must be an upload key from /upload-url, or null',
  noSupportedFields: 'No supported fields to update (title, body, attachmentKey)',
  notFound: 'Note not found',
  concurrentChange: 'The note changed at the same time; try again',
  noAttachment: 'Note has no attachment',
  filesUnavailable: 'File service unavailable',
  createFailed: 'Failed to create note',
  fetchFailed: 'Failed to fetch notes',
  updateFailed: 'Failed to update note',
  deleteFailed: 'Failed to delete note',
  attachmentFailed: 'Failed to create download link',
} as const;

export const noteMessages = {
  '': messages.noSupportedFields,
  title: messages.titleRequired,
  body: messages.bodyInvalid,
  attachmentKey: messages.attachmentKeyInvalid,
} as const;
