/**
 * The notes resource's words. The request schemas, their limits and their messages are the
 * OpenAPI document's own (`@cs/contract`), so validation and the document cannot drift.
 */
import { noteMessages } from '@cs/contract';

export const messages = {
  ...noteMessages,
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
