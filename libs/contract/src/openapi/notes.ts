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

/** What `thumb` gives, and what it refuses. */
const THUMBNAILS =
  'A thumbnail is made on the first request for its size (png, jpeg, gif and webp only, else 400), in the original’s format, turned upright as its EXIF orientation says, never enlarged, with every metadata block stripped (no GPS position), and from the first frame of an animation; later requests only sign a link. An image over THUMB_MAX_PIXELS (40 megapixels by default), or one that is corrupt, is 422. When every thumbnail worker stays busy for 10 s, 503 with Retry-After.';

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
      description: `A signed download link (GET, 3600 s) for the note’s attachment; with \`thumb\`, a link to a thumbnail of it instead. ${THUMBNAILS}\n\n${alsoServedAt('/api/notes/{id}/attachment')}`,
      tag: 'notes',
      auth: 'required',
      pathId: NOTE_ID,
      query: [
        {
          name: 'thumb',
          description:
            'A thumbnail size, in PocketBase’s syntax: `WxH` (cropped to the centre), `WxHt` and `WxHb` (cropped from the top, the bottom), `WxHf` (fitted inside, not cropped), `0xH`, `Wx0`. Only the sizes the server allows (THUMB_SIZES, by default `100x100`, `300x0`, `800x0`); any other is 400, naming them. Empty is the same as absent.',
          example: '100x100',
        },
      ],
      ok: { status: 200, description: 'The link.', schema: ref('DownloadLink') },
      errors: ['Unprocessable'],
    }),
  },
} as const;
