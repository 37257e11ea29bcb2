/**
 * The signed-in person's notes, each with an optional file. A file goes from the browser
 * straight to storage through signed links (with a progress bar); the note keeps only its key.
 */

import type { UnfinishedUpload } from '@content-service/client';
import { LIMITS } from '@cs/contract/src/limits';
import { ApiError, api, type FieldError, type Note, type Page } from '../api';
import { alertBox, focusOn, formatBytes, formatDate, h, replaceChildren } from '../dom';
import {
  act,
  actions,
  busy,
  cancelEdit,
  clearFieldErrors,
  clearWhenEdited,
  field,
  input,
  showError,
  textarea,
} from '../forms';
import { onLive } from '../live';
import { refusal, uploadRules } from '../upload-rules';

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

/**
 * A file picker with a progress bar that shows the bytes sent while an upload runs, and Pause,
 * Resume and Cancel beside it, whatever the file's size.
 */
function filePicker(label: string) {
  const picker = h('input', { type: 'file', name: 'file' });
  const bar = h('progress', { max: 1, value: 0, 'aria-label': 'Upload progress' });
  const status = h('span', { class: 'progress-text' });
  const controls = h('span', { class: 'upload-controls' });
  const progress = h('div', { class: 'progress', hidden: true }, bar, status, controls);
  const element = h('div', null, field(label, picker), progress);
  /**
   * The file this picker last sent, and its key, while that file is still the one chosen: when the
   * note's save failed after the upload, saving again sends the key, not the file once more.
   */
  let sent: { file: File; key: string } | undefined;
  // The chooser offers the allowed types; a file that breaks a rule is explained at once, beside it.
  void uploadRules().then((rules) => {
    if (rules) picker.accept = rules.allowedTypes.join(',');
  });
  const check = async (file: File) => {
    const rules = await uploadRules();
    const why = rules && refusal(file, rules);
    const slot = element.querySelector<HTMLElement>('.field-error');
    if (slot) {
      slot.textContent = why ?? '';
      slot.hidden = !why;
    }
    if (why) picker.setAttribute('aria-invalid', 'true');
    else picker.removeAttribute('aria-invalid');
    return why;
  };
  picker.addEventListener('change', () => {
    sent = undefined;
    const file = picker.files?.[0];
    if (file) void check(file);
  });

  async function upload(file: File): Promise<string> {
    progress.hidden = false;
    bar.value = 0;
    status.textContent = `${formatBytes(0)} of ${formatBytes(file.size)} sent`;
    const cancel = new AbortController();
    const show = (bytes: number, total: number) => {
      bar.max = total || 1;
      bar.value = bytes;
      status.textContent = `${formatBytes(bytes)} of ${formatBytes(total)} sent${task.paused ? ' (paused)' : ''}`;
    };
    const task = api.startUpload(file, { onProgress: show, signal: cancel.signal });
    // Made now, not with the form: the form's buttons are disabled while it is busy.
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
  }

  return {
    element,
    /** Why the chosen file cannot be attached, as its field's error; none when it can, or when none is chosen. */
    async problems(): Promise<FieldError[]> {
      const file = picker.files?.[0];
      const why = file && (await check(file));
      return why ? [{ field: 'file', message: why }] : [];
    },
    /** Whether `upload` would give the key of a file sent before rather than send it. */
    get holdsKey(): boolean {
      return sent !== undefined && sent.file === picker.files?.[0];
    },
    /** The chosen file's key, if one is chosen: sent now, or kept from the last time it was sent. */
    async upload(): Promise<string | undefined> {
      const file = picker.files?.[0];
      if (!file) return undefined;
      if (sent?.file === file) return sent.key;
      const key = await upload(file);
      sent = { file, key };
      return key;
    },
    /** Forgets the kept key: the API no longer takes it, so the file goes up again. */
    forget() {
      sent = undefined;
    },
    /** Clears the choice; the finished bar stays, as the receipt of the last upload. */
    reset() {
      picker.value = '';
      sent = undefined;
    },
  };
}

type FilePicker = ReturnType<typeof filePicker>;

/** The API refused a note's key itself (a failed save released it meanwhile, say). */
const keyRefused = (error: unknown) =>
  error instanceof ApiError &&
  error.status === 400 &&
  (/^attachmentKey\b/i.test(error.message) || error.fieldErrors.some((e) => e.field === 'attachmentKey'));

/**
 * Saves a note with the picker's file. The note and the file are checked first, and nothing goes
 * up when either would be refused. A key kept from a save that failed is sent again instead of the
 * file; should the API no longer take it, the file goes up once more, and the note with its key.
 */
async function saveWithFile<T>(
  picker: FilePicker,
  problems: FieldError[],
  save: (key: string | undefined) => Promise<T>,
): Promise<T> {
  const all = [...problems, ...(await picker.problems())];
  if (all.length > 0) throw new ApiError('Please correct the highlighted fields.', 400, all);
  const kept = picker.holdsKey;
  const key = await picker.upload();
  try {
    return await save(key);
  } catch (error) {
    if (!kept || !keyRefused(error)) throw error;
    picker.forget();
    return save(await picker.upload());
  }
}

export function notesView(): HTMLElement {
  const alert = alertBox();
  const heading = h('h2', null, 'Your notes');
  const list = h('ul', { class: 'cards', 'aria-label': 'My notes' });
  // The list comes a page at a time; older notes are added below on request.
  const older = h('button', { type: 'button', hidden: true }, 'Show older notes');
  let nextPage: string | undefined;
  const show = (page: Page<Note>, append: boolean) => {
    const items = page.items.map((note) => noteItem(note, refresh, alert, heading));
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
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    createAlert.clear();
    void busy(form, async () => {
      try {
        await saveWithFile(file, titleProblems(title.value), (attachmentKey) =>
          api.createNote({ title: title.value, body: body.value, ...(attachmentKey ? { attachmentKey } : {}) }),
        );
        // An unfinished upload this one finished is no longer offered.
        const open = new Set(api.unfinishedUploads().map((u) => u.uploadId));
        for (const notice of form.querySelectorAll<HTMLElement>('.unfinished-upload')) {
          if (!open.has(notice.dataset.uploadId ?? '')) notice.remove();
        }
        form.reset();
        file.reset();
        clearFieldErrors(form);
        createAlert.show('Note saved.', 'ok');
        focusOn(createAlert);
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
    const item = noteItem(event.note, refresh, alert, heading);
    if (shown) shown.replaceWith(item);
    else {
      list.querySelector('li.empty')?.remove();
      list.prepend(item);
    }
  });

  return h('section', null, h('h1', null, 'Notes'), form, heading, alert, list, actions(older));
}

/**
 * A large upload begun here that a reload (or a closed tab) interrupted. The browser cannot read
 * the file again by itself: choosing it again resumes the upload where it stopped.
 */
function unfinishedNotice(upload: UnfinishedUpload, alert: { show(message: string): void }): HTMLElement {
  const notice = h(
    'div',
    { class: 'notice unfinished-upload', role: 'status', 'data-upload-id': upload.uploadId },
    h(
      'p',
      { class: 'notice-text' },
      `The upload of “${upload.filename}” (${formatBytes(upload.size)}) did not finish. Choose the same file below to continue where it stopped.`,
    ),
  );
  notice.append(
    actions(
      h(
        'button',
        {
          type: 'button',
          onclick: () =>
            void act(notice, alert, async () => {
              await api.discardUpload(upload.uploadId);
              notice.remove();
            }),
        },
        `Discard the upload of ${upload.filename}`,
      ),
    ),
  );
  return notice;
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
    const editAlert = alertBox();
    const title = input('title', { value: note.title, maxLength: TITLE_MAX });
    const body = textarea('body', { value: note.body, rows: 4 });
    const picker = filePicker(file ? 'Replace the file' : 'Attach a file');
    const remove = h('input', { type: 'checkbox', name: 'removeFile' });
    const form = h(
      'form',
      { novalidate: true },
      editAlert,
      field('Title', title),
      field('Text', body),
      picker.element,
      file
        ? h('div', { class: 'field checkbox' }, h('label', null, remove, ` Remove ${file.name} from this note`))
        : null,
      actions(h('button', { type: 'submit', class: 'primary' }, 'Save changes'), cancelEdit(item, show)),
    );
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      void busy(form, async () => {
        try {
          await saveWithFile(picker, titleProblems(title.value), (uploaded) => {
            // A file chosen replaces the one held; otherwise the box removes it (storage deletes it).
            const attachmentKey = uploaded ?? (remove.checked ? null : undefined);
            return api.updateNote(note._id, {
              title: title.value,
              body: body.value,
              ...(attachmentKey !== undefined ? { attachmentKey } : {}),
            });
          });
          await refresh();
          // The item was drawn again: the focus goes to its heading.
          focusOn(listHeading.parentElement?.querySelector<HTMLElement>(`li[data-note-id="${note._id}"] h3`));
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
