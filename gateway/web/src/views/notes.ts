/**
 * The signed-in person's notes, each with an optional file. A file goes from the browser
 * straight to storage through signed links (with a progress bar); the note keeps only its key.
 */

import { MULTIPART_FROM } from '@content-service/client';
import { api, type Note, type Page } from '../api';
import { alertBox, formatBytes, formatDate, h, replaceChildren } from '../dom';
import { act, actions, busy, clearFieldErrors, field, input, showError, textarea } from '../forms';
import { onLive } from '../live';

/**
 * A file picker with a progress bar that shows the bytes sent while an upload runs. A file sent
 * in parts can be paused, resumed and cancelled meanwhile.
 */
function filePicker(label: string) {
  const picker = h('input', { type: 'file', name: 'file' });
  const bar = h('progress', { max: 1, value: 0, 'aria-label': 'Upload progress' });
  const status = h('span', { class: 'progress-text' });
  const controls = h('span', { class: 'upload-controls' });
  const progress = h('div', { class: 'progress', hidden: true }, bar, status, controls);
  return {
    element: h('div', null, field(label, picker), progress),
    /** Uploads the chosen file, if any, and gives its key. */
    async upload(): Promise<string | undefined> {
      const file = picker.files?.[0];
      if (!file) return undefined;
      progress.hidden = false;
      bar.value = 0;
      status.textContent = `${formatBytes(0)} of ${formatBytes(file.size)} sent`;
      const cancel = new AbortController();
      const show = (sent: number, total: number) => {
        bar.max = total || 1;
        bar.value = sent;
        status.textContent = `${formatBytes(sent)} of ${formatBytes(total)} sent${task.paused ? ' (paused)' : ''}`;
      };
      const task = api.startUpload(file, { onProgress: show, signal: cancel.signal });
      // Made now, not with the form: the form's buttons are disabled while it is busy.
      if (file.size > MULTIPART_FROM) {
        const pause = h('button', { type: 'button' }, 'Pause');
        pause.addEventListener('click', () => {
          if (task.paused) task.resume();
          else task.pause();
          pause.textContent = task.paused ? 'Resume' : 'Pause';
          const text = (status.textContent ?? '').replace(/ \(paused\)$/, '');
          status.textContent = task.paused ? `${text} (paused)` : text;
        });
        const stop = h('button', { type: 'button', onclick: () => cancel.abort() }, 'Cancel upload');
        replaceChildren(controls, pause, stop);
      }
      try {
        const key = await task.done;
        status.textContent = `${file.name}: ${formatBytes(file.size)} uploaded`;
        return key;
      } catch (error) {
        progress.hidden = true;
        throw error;
      } finally {
        replaceChildren(controls);
      }
    },
    /** Clears the choice; the finished bar stays, as the receipt of the last upload. */
    reset() {
      picker.value = '';
    },
  };
}

export function notesView(): HTMLElement {
  const alert = alertBox();
  const list = h('ul', { class: 'cards', 'aria-label': 'My notes' });
  // The list comes a page at a time; older notes are added below on request.
  const older = h('button', { type: 'button', hidden: true }, 'Show older notes');
  let nextPage: string | undefined;
  const show = (page: Page<Note>, append: boolean) => {
    const items = page.items.map((note) => noteItem(note, refresh, alert));
    if (append) list.append(...items);
    else replaceChildren(list, ...(items.length === 0 ? [h('li', { class: 'empty' }, 'No notes yet.')] : items));
    nextPage = page.next;
    older.hidden = nextPage === undefined;
  };
  const refresh = async () => {
    try {
      show(await api.listNotes(), false);
    } catch (error) {
      alert.show((error as Error).message);
    }
  };
  older.addEventListener('click', () => {
    if (nextPage) void act(older, alert, async () => show(await api.listNotes(nextPage), true));
  });

  const createAlert = alertBox();
  const title = input('title', { maxLength: 200 });
  const body = textarea('body', { rows: 4 });
  const file = filePicker('Attachment (optional)');
  const form = h(
    'form',
    { class: 'card', novalidate: true, 'aria-labelledby': 'new-note-heading' },
    h('h2', { id: 'new-note-heading' }, 'New note'),
    createAlert,
    field('Title', title),
    field('Text', body),
    file.element,
    actions(h('button', { type: 'submit', class: 'primary' }, 'Save note')),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    createAlert.clear();
    void busy(form, async () => {
      try {
        const attachmentKey = await file.upload();
        await api.createNote({ title: title.value, body: body.value, ...(attachmentKey ? { attachmentKey } : {}) });
        form.reset();
        file.reset();
        clearFieldErrors(form);
        createAlert.show('Note saved.', 'ok');
        await refresh();
      } catch (error) {
        showError(form, createAlert, error);
      }
    });
  });

  void refresh();

  // A note written on another device or tab shows here as it is saved. A note being edited here
  // keeps its editor (and what was typed); the rest follow. Until this screen is left.
  const stop = onLive((event) => {
    if (!list.isConnected) return stop();
    if (event.kind === 'reset') return void refresh();
    if (event.topic !== 'notes') return;
    const id = event.kind === 'upsert' ? event.note._id : event.id;
    const shown = list.querySelector<HTMLElement>(`li[data-note-id="${CSS.escape(id)}"]`);
    if (event.kind === 'remove') return shown?.remove();
    if (shown?.querySelector('form')) return;
    const item = noteItem(event.note, refresh, alert);
    if (shown) shown.replaceWith(item);
    else {
      list.querySelector('li.empty')?.remove();
      list.prepend(item);
    }
  });

  return h('section', null, h('h1', null, 'Notes'), form, h('h2', null, 'Your notes'), alert, list, actions(older));
}

function noteItem(note: Note, refresh: () => Promise<void>, alert: { show(message: string): void }): HTMLElement {
  const item = h('li', { class: 'card', 'data-note-id': note._id });

  const download = () =>
    act(item, alert, async () => {
      // A fresh signed link each time; storage answers it as an attachment, so this saves the file.
      const { url } = await api.attachmentLink(note._id);
      h('a', { href: url, rel: 'noopener' }).click();
    });

  const show = () =>
    replaceChildren(
      item,
      h('h3', null, note.title),
      h('p', { class: 'meta' }, `Updated ${formatDate(note.updatedAt)}`),
      note.body ? h('p', { class: 'body-preview' }, note.body) : null,
      actions(
        note.attachmentKey
          ? h(
              'button',
              { type: 'button', onclick: download },
              `Download ${note.attachmentKey.split('.').pop()?.toUpperCase()} file`,
            )
          : null,
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
              });
            },
          },
          'Delete',
        ),
      ),
    );

  function edit() {
    const editAlert = alertBox();
    const title = input('title', { value: note.title, maxLength: 200 });
    const body = textarea('body', { value: note.body, rows: 4 });
    const file = filePicker(note.attachmentKey ? 'Replace the file' : 'Attach a file');
    const form = h(
      'form',
      { novalidate: true },
      editAlert,
      field('Title', title),
      field('Text', body),
      file.element,
      actions(
        h('button', { type: 'submit', class: 'primary' }, 'Save changes'),
        h('button', { type: 'button', onclick: show }, 'Cancel'),
      ),
    );
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      void busy(form, async () => {
        try {
          const attachmentKey = await file.upload();
          await api.updateNote(note._id, {
            title: title.value,
            body: body.value,
            ...(attachmentKey ? { attachmentKey } : {}),
          });
          await refresh();
        } catch (error) {
          showError(form, editAlert, error);
        }
      });
    });
    replaceChildren(item, h('h3', null, 'Edit note'), form);
    title.focus();
  }

  show();
  return item;
}
