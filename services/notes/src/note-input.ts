import type { NoteChanges, NoteInput } from './notes';

/** After the validation step: the title trimmed, the body defaulted. */
export function toNoteInput(body: Record<string, unknown>): NoteInput {
  return {
    title: String(body.title).trim(),
    body: typeof body.body === 'string' ? body.body : '',
    attachmentKey: typeof body.attachmentKey === 'string' ? body.attachmentKey : null,
  };
}

/** After the validation step (which removed unknown fields and made sure one is left): what to change. */
export function toNoteChanges(body: Record<string, unknown>): NoteChanges {
  const changes: NoteChanges = {};
  if (typeof body.title === 'string') changes.title = body.title.trim();
  if (typeof body.body === 'string') changes.body = body.body;
  if (body.attachmentKey !== undefined) changes.attachmentKey = body.attachmentKey as string | null;
  return changes;
}
