/**
 * The signed-in person's notes, each with an optional file. A file goes from the browser
 * straight to storage through signed links (with a progress bar); the note keeps only its key.
 */

import { LIMITS } from '@cs/contract/src/limits';
import { api, type FieldError, type Note, type Page } from '../api';
import { alertBox, focusOn, formatBytes, formatDate, h, replaceChildren } from '../dom';
import { editInPlace } from '../edit-in-place';
import { act, actions, clearAfterSave, clearWhenEdited, field, input, onSubmit, textarea } from '../forms';
import { onLive } from '../live';
import { filePicker, saveWithFile } from './file-picker';
import { noteThumbnail } from './note-thumbnail';
import { newestOnly, searchBox } from './search-box';
import { unfinishedNotice } from './unfinished-upload';

/** The longest title the API takes (its notes' title rule), in characters. */
const TITLE_MAX = LIMITS.noteTitleMax;

/**
 * What the API would refuse in a note's title, in its own words: it must hold more than spaces,
 * and at most TITLE_MAX characters. Checked before the file goes up, so that a note the API would
 * refuse sends no file.
 */
function titleProblems(title: string): FieldError[] {
  if (/\S/.test(title) && [...title].length <= TITLE_MAX) return [];
  return [{ field: 'title', message: `title is required and must be 1 to ${TITLE_MAX} characters` }];
}

export function notesView(): HTMLElement {
  const alert = alertBox();
  const heading = h('h2', null, 'Your notes');
  const list = h('ul', { class: 'cards', 'aria-label': 'My notes' });
  // The list comes a page at a time; older notes are added below on request.
  const older = h('button', { type: 'button', hidden: true }, 'Show older notes');
  let nextPage: string | undefined;
  // What the search box holds: the list is its results, best first, until it is emptied.
  let q = '';
  const search = searchBox({
    label: 'Search your notes',
    onSearch: (words) => {
      q = words;
      void refresh();
    },
  });
  const newest = newestOnly();
  /** Whether the list shown is still the newest one asked for (a search, a refresh). */
  let listed = () => true;
  const show = (page: Page<Note>, append: boolean) => {
    const items = page.items.map((note) => noteItem(note, refresh, alert, heading));
    const none = q ? `No notes match “${q}”.` : 'No notes yet.';
    if (append) list.append(...items);
    else replaceChildren(list, ...(items.length === 0 ? [h('li', { class: 'empty' }, none)] : items));
    nextPage = page.next;
    older.hidden = nextPage === undefined;
    older.textContent = q ? 'Show more notes' : 'Show older notes';
    const shown = list.querySelectorAll('li[data-note-id]').length;
    if (q) search.found(`${shown}${nextPage ? ' or more' : ''} note${shown === 1 ? '' : 's'} found for “${q}”.`);
    else search.reset();
  };
  const refresh = async () => {
    const current = newest();
    listed = current;
    try {
      const page = await api.listNotes(undefined, q);
      if (current()) show(page, false);
    } catch (error) {
      if (!current()) return;
      if (q) search.failed((error as Error).message);
      else alert.show((error as Error).message);
    }
  };
  older.addEventListener('click', () => {
    // A further page of the list shown: dropped when a newer search or refresh replaced that list.
    const current = listed;
    if (!nextPage) return;
    void act(older, alert, async () => {
      const page = await api.listNotes(nextPage, q);
      if (current()) show(page, true);
    });
  });

  const createAlert = alertBox();
  const title = input('title', { maxLength: TITLE_MAX });
  const body = textarea('body', { rows: 4 });
  const file = filePicker('Attachment (optional)');
  const form = h(
    'form',
    { class: 'card', novalidate: true, 'aria-labelledby': 'new-note-heading' },
    h('h2', { id: 'new-note-heading' }, 'New note'),
    createAlert,
    field('Title', title),
    field('Text', body),
    ...api.unfinishedUploads().map((upload) => unfinishedNotice(upload, createAlert)),
    file.element,
    actions(h('button', { type: 'submit', class: 'primary' }, 'Save note')),
  );
  clearWhenEdited(form, createAlert);
  onSubmit(form, createAlert, async () => {
    createAlert.clear();
    await saveWithFile(file, titleProblems(title.value), (attachmentKey) =>
      api.createNote({ title: title.value, body: body.value, ...(attachmentKey ? { attachmentKey } : {}) }),
    );
    // An unfinished upload this one finished is no longer offered.
    const open = new Set(api.unfinishedUploads().map((u) => u.uploadId));
    for (const notice of form.querySelectorAll<HTMLElement>('.unfinished-upload')) {
      if (!open.has(notice.dataset.uploadId ?? '')) notice.remove();
    }
    file.reset();
    clearAfterSave(form, createAlert, 'Note saved.');
    await refresh();
  });

  void refresh();

  // A note written on another device or tab shows here as it is saved. A note being edited here
  // keeps its editor (and what was typed); the rest follow. Until this screen is left.
  const stop = onLive((event) => {
    if (!list.isConnected) return stop();
    if (event.kind === 'reset') return void refresh();
    if (event.topic !== 'notes') return;
    // Whether a changed note matches a search is the API's to say: the results are asked again,
    // unless a note is being edited here (it keeps its editor).
    if (q) {
      if (!list.querySelector('form')) void refresh();
      return;
    }
    const id = event.kind === 'upsert' ? event.note._id : event.id;
    const shown = list.querySelector<HTMLElement>(`li[data-note-id="${CSS.escape(id)}"]`);
    if (event.kind === 'remove') return shown?.remove();
    if (shown?.querySelector('form')) return;
    const item = noteItem(event.note, refresh, alert, heading);
    if (shown) shown.replaceWith(item);
    else {
      list.querySelector('li.empty')?.remove();
      list.prepend(item);
    }
  });

  return h('section', null, h('h1', null, 'Notes'), form, heading, search.element, alert, list, actions(older));
}

/** The note's file as a person sees it: its name, and its size and type when known. */
function fileOf(note: Note): { name: string; detail: string } | undefined {
  if (!note.attachmentKey) return undefined;
  const { attachment } = note;
  if (!attachment) return { name: note.attachmentKey.slice(note.attachmentKey.lastIndexOf('/') + 1), detail: '' };
  return { name: attachment.filename, detail: ` (${formatBytes(attachment.size)}, ${attachment.contentType})` };
}

function noteItem(
  note: Note,
  refresh: () => Promise<void>,
  alert: { show(message: string): void },
  listHeading: HTMLElement,
): HTMLElement {
  const item = h('li', { class: 'card', 'data-note-id': note._id });

  const download = () =>
    act(item, alert, async () => {
      // A fresh signed link each time; storage answers it as an attachment, so this saves the file.
      const { url } = await api.attachmentLink(note._id);
      h('a', { href: url, rel: 'noopener' }).click();
    });

  const file = fileOf(note);
  const show = () =>
    replaceChildren(
      item,
      h('h3', null, note.title),
      h('p', { class: 'meta' }, `Updated ${formatDate(note.updatedAt)}`),
      note.body ? h('p', { class: 'body-preview' }, note.body) : null,
      file ? h('p', { class: 'attachment' }, 'File: ', h('span', { class: 'filename' }, file.name), file.detail) : null,
      noteThumbnail(note),
      actions(
        file ? h('button', { type: 'button', onclick: download }, `Download ${file.name}`) : null,
        h('button', { type: 'button', onclick: edit }, 'Edit'),
        h(
          'button',
          {
            type: 'button',
            class: 'danger',
            onclick: () => {
              if (!confirm(`Delete the note “${note.title}”${note.attachmentKey ? ' and its file' : ''}?`)) return;
              void act(item, alert, async () => {
                await api.deleteNote(note._id);
                await refresh();
                // The item is gone: the focus goes to the list's heading.
                focusOn(listHeading);
              });
            },
          },
          'Delete',
        ),
      ),
    );

  function edit() {
    const title = input('title', { value: note.title, maxLength: TITLE_MAX });
    const body = textarea('body', { value: note.body, rows: 4 });
    const picker = filePicker(file ? 'Replace the file' : 'Attach a file');
    const remove = h('input', { type: 'checkbox', name: 'removeFile' });
    editInPlace(item, {
      heading: 'Edit note',
      fields: [
        field('Title', title),
        field('Text', body),
        picker.element,
        file
          ? h('div', { class: 'field checkbox' }, h('label', null, remove, ` Remove ${file.name} from this note`))
          : null,
      ],
      first: title,
      show,
      save: () =>
        saveWithFile(picker, titleProblems(title.value), (uploaded) => {
          // A file chosen replaces the one held; otherwise the box removes it (storage deletes it).
          const attachmentKey = uploaded ?? (remove.checked ? null : undefined);
          return api.updateNote(note._id, {
            title: title.value,
            body: body.value,
            ...(attachmentKey !== undefined ? { attachmentKey } : {}),
          });
        }),
      refresh,
      redrawn: () => listHeading.parentElement?.querySelector<HTMLElement>(`li[data-note-id="${note._id}"] h3`),
    });
  }

  show();
  return item;
}
