/** The operations of the `notes` tag, the attachment's download link included. */
import { LIMITS } from '../limits';
import { slot } from './examples';
import { alsoServedAt, operation, type PathId } from './operation';
import { ref } from './responses';
import { searchParam } from './search';

const NOTE_ID: PathId = {
  description: 'The note’s record identifier (24 hex digits; anything else is 400).',
  example: slot('noteId'),
};

export const notesPaths = {
  '/api/notes': {
    get: operation({
      id: 'listNotes',
      summary: 'List the caller’s notes, newest first',
      description: 'A page at a time (the next page through the Link header).',
      tag: 'notes',
      auth: 'required',
      paged: { defaultLimit: LIMITS.notesPageDefault, maxLimit: LIMITS.notesPageMax },
      query: [searchParam('the caller’s notes (title and body)', 'further pages through the Link header.')],
      ok: { status: 200, description: 'The notes.', schema: { type: 'array', items: ref('Note') } },
    }),
    post: operation({
      id: 'createNote',
      summary: 'Create a note',
      description: 'An `attachmentKey` must be an upload of the caller’s.',
      tag: 'notes',
      auth: 'required',
      body: ref('CreateNote'),
      example: { title: 'Shopping list', body: 'Eggs, flour, milk.', attachmentKey: slot('uploadKey') },
      ok: { status: 201, description: 'Created.', schema: ref('Note') },
    }),
  },
  '/api/notes/{id}': {
    get: operation({
      id: 'getNote',
      summary: 'Get one of the caller’s notes',
      tag: 'notes',
      auth: 'required',
      pathId: NOTE_ID,
      ok: { status: 200, description: 'The note.', schema: ref('Note') },
    }),
    put: operation({
      id: 'updateNote',
      summary: 'Change the title, body or attachmentKey of a note',
      description: 'A replaced attachment is deleted.',
      tag: 'notes',
      auth: 'required',
      pathId: NOTE_ID,
      body: ref('UpdateNote'),
      example: { body: 'Eggs, flour, milk, butter.' },
      ok: { status: 200, description: 'The updated note.', schema: ref('Note') },
      errors: ['Conflict'],
    }),
    delete: operation({
      id: 'deleteNote',
      summary: 'Delete one of the caller’s notes and its attachment',
      description: 'The attachment goes right after the note; 204 whether or not one was deleted.',
      tag: 'notes',
      auth: 'required',
      pathId: NOTE_ID,
      ok: { status: 204, description: 'Done.' },
      errors: ['Conflict'],
    }),
  },
  '/notes/{id}/attachment': {
    get: operation({
      id: 'noteAttachment',
      summary: 'Get a download link for the note’s attachment',
      description: `A signed download link (GET, 3600 s) for the note’s attachment.\n\n${alsoServedAt('/api/notes/{id}/attachment')}`,
      tag: 'notes',
      auth: 'required',
      pathId: NOTE_ID,
      ok: { status: 200, description: 'The link.', schema: ref('DownloadLink') },
    }),
  },
} as const;
