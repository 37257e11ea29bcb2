import { HttpError } from '@cs/errors';
import type { NoteChanges, NoteInput } from './notes';
import { messages } from './schemas';

/** After the validation step: the title trimmed, the body defaulted. */
export function toNoteInput(body: Record<string, unknown>): NoteInput {
  return {
    title: String(body.title).trim(),
    body: typeof body.body === 'string' ? body.body : '',
    attachmentKey: typeof body.attachmentKey === 'string' ? body.attachmentKey : null,
  };
}

/** After the validation step (which removed unknown fields): what to change, at least one thing. */
export function toNoteChanges(body: Record<string, unknown>): NoteChanges {
  const changes: NoteChanges = {};
  if (typeof body.title === 'string') changes.title = body.title.trim();
  if (typeof body.body === 'string') changes.body = body.body;
  if (body.attachmentKey !== undefined) changes.attachmentKey = body.attachmentKey as string | null;
  if (Object.keys(changes).length === 0) {
    throw new HttpError(400, 'Validation failed', { details: [{ field: '', message: messages.noSupportedFields }] });
  }
  return changes;
}
