/**
 * A note's file, as the forms of Notes take it: a picker that sends the file chosen straight to
 * storage through signed links (with a progress bar, Pause, Resume and Cancel), and the save of a
 * note with that file.
 */
import { ApiError, api, type FieldError } from '../api';
import { formatBytes, h, replaceChildren } from '../dom';
import { field } from '../forms';
import { refusal, uploadRules } from '../upload-rules';

/**
 * A file picker with a progress bar that shows the bytes sent while an upload runs, and Pause,
 * Resume and Cancel beside it, whatever the file's size.
 */
export function filePicker(label: string) {
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

export type FilePicker = ReturnType<typeof filePicker>;

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
export async function saveWithFile<T>(
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
