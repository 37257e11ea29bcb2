/** The signed-in person's notes, and the file a note may hold. */
import type { Calls, Raw } from './calls.js';
import type { components } from './schema.js';

type Schemas = components['schemas'];
export type Note = Schemas['Note'];
export type NewNote = Schemas['CreateNote'];
export type NoteChanges = Schemas['UpdateNote'];
export type DownloadLink = Schemas['DownloadLink'];

export function noteCalls(raw: Raw, run: Calls['run'], page: Calls['page']) {
  return {
    /**
     * The caller's notes, newest first, a page at a time; with `q`, only those whose title or body
     * match, best first (the public list's rules: see ListPostsOptions). A further page takes its
     * `cursor` with the same `q`.
     */
    list: (query: { limit?: number; cursor?: string; q?: string } = {}) =>
      page(() =>
        raw.GET('/api/notes', {
          params: {
            query: {
              ...(query.limit ? { limit: String(query.limit) } : {}),
              ...(query.cursor ? { cursor: query.cursor } : {}),
              ...(query.q ? { q: query.q } : {}),
            },
          },
        }),
      ),
    get: (id: string) => run(() => raw.GET('/api/notes/{id}', { params: { path: { id } } })),
    create: (note: NewNote) => run(() => raw.POST('/api/notes', { body: note })),
    update: (id: string, changes: NoteChanges) =>
      run(() => raw.PUT('/api/notes/{id}', { params: { path: { id } }, body: changes })),
    remove: (id: string) => run(() => raw.DELETE('/api/notes/{id}', { params: { path: { id } } })),
    /** Attaches an uploaded file's key to a note (the file it replaces is deleted). */
    attach: (id: string, key: string) =>
      run(() => raw.PUT('/api/notes/{id}', { params: { path: { id } }, body: { attachmentKey: key } })),
    /**
     * A signed download link for the note's file (valid for an hour); with `thumb` (a size the
     * server allows, such as `100x100`), a link to a thumbnail of the image instead.
     */
    downloadLink: (id: string, { thumb }: { thumb?: string } = {}) =>
      run(() => raw.GET('/notes/{id}/attachment', { params: { path: { id }, query: thumb ? { thumb } : {} } })),
  };
}
