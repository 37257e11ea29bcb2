/** Form helpers: labelled fields with a place for their own message, and showing API errors. */
import { ApiError } from './api';
import { type AlertBox, type Child, focusOn, h } from './dom';

export function field(label: string, control: HTMLInputElement | HTMLTextAreaElement, hint?: string): HTMLElement {
  const id = `f-${control.name}-${Math.random().toString(36).slice(2, 8)}`;
  control.id = id;
  const message = h('p', { class: 'field-error', id: `${id}-error`, 'data-field': control.name, hidden: true });
  control.setAttribute('aria-describedby', `${id}-error`);
  return h(
    'div',
    { class: 'field' },
    h('label', { for: id }, label),
    control,
    hint ? h('p', { class: 'hint' }, hint) : null,
    message,
  );
}

export function clearFieldErrors(form: HTMLElement): void {
  for (const message of form.querySelectorAll<HTMLElement>('.field-error')) {
    message.hidden = true;
    message.textContent = '';
  }
  for (const control of form.querySelectorAll('[aria-invalid]')) control.removeAttribute('aria-invalid');
}

/**
 * Shows an error: each field message beside its field, the summary in the form's alert box.
 * Messages for fields the form does not have go into the summary too.
 */
export function showError(form: HTMLElement, alert: { show(message: string): void }, error: unknown): void {
  clearFieldErrors(form);
  if (!(error instanceof ApiError)) {
    alert.show('Something unexpected went wrong. Please try again.');
    console.error(error);
    return;
  }
  const unplaced: string[] = [];
  for (const { field: name, message } of error.fieldErrors) {
    const slot = form.querySelector<HTMLElement>(`.field-error[data-field="${CSS.escape(name)}"]`);
    if (!slot) {
      unplaced.push(message);
      continue;
    }
    const control = form.querySelector(`[name="${CSS.escape(name)}"]`);
    slot.textContent = inWordsOf(message, name, control);
    slot.hidden = false;
    control?.setAttribute('aria-invalid', 'true');
  }
  alert.show([error.message, ...unplaced.map(capitalize)].join(' '));
}

/**
 * The API names a field as its JSON does (`body must be…`); beside it, the message names it as its
 * label does (`Text must be…`), so that the page speaks of one field by one name.
 */
function inWordsOf(message: string, name: string, control: Element | null): string {
  const label = control?.id ? control.ownerDocument.querySelector(`label[for="${CSS.escape(control.id)}"]`) : null;
  const words = label?.textContent?.replace(/\s*\(optional\)$/, '').trim();
  if (words && message.toLowerCase().startsWith(`${name.toLowerCase()} `))
    return `${words}${message.slice(name.length)}`;
  return capitalize(message);
}

function capitalize(text: string): string {
  return text ? text[0]?.toUpperCase() + text.slice(1) : text;
}

/** A form's message goes once the person changes the form again: it spoke of what was sent. */
export function clearWhenEdited(form: HTMLElement, alert: { clear(): void }): void {
  form.addEventListener('input', () => alert.clear());
}

/** Disables a form's buttons while `work` runs, so a double click sends one request. */
export async function busy<T>(form: HTMLElement, work: () => Promise<T>): Promise<T> {
  const buttons = [...form.querySelectorAll<HTMLButtonElement>('button')];
  for (const button of buttons) button.disabled = true;
  form.setAttribute('aria-busy', 'true');
  try {
    return await work();
  } finally {
    for (const button of buttons) button.disabled = false;
    form.removeAttribute('aria-busy');
  }
}

/**
 * What a form does when it is sent: `work`, while its buttons are disabled (see busy); what that
 * throws is shown in `alert`, and each field's message beside its field (see showError).
 */
export function onSubmit(
  form: HTMLFormElement,
  alert: { show(message: string): void },
  work: () => Promise<unknown>,
): void {
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void busy(form, async () => {
      try {
        await work();
      } catch (error) {
        showError(form, alert, error);
      }
    });
  });
}

/** A new item's form once the item is saved: empty again, and `message` said in `alert`, which has the focus. */
export function clearAfterSave(form: HTMLFormElement, alert: AlertBox, message: string): void {
  form.reset();
  clearFieldErrors(form);
  alert.show(message, 'ok');
  focusOn(alert);
}

/** An action on an item of a list: its buttons are disabled meanwhile; a failure is shown in `alert`. */
export function act(
  item: HTMLElement,
  alert: { show(message: string): void },
  work: () => Promise<unknown>,
): Promise<void> {
  return busy(item, async () => {
    try {
      await work();
    } catch (error) {
      alert.show((error as Error).message);
    }
  });
}

export function input(name: string, props: Record<string, unknown> = {}): HTMLInputElement {
  return h('input', { name, type: 'text', ...props });
}

export function textarea(name: string, props: Record<string, unknown> = {}): HTMLTextAreaElement {
  return h('textarea', { name, rows: 5, ...props });
}

/** An item's edit form's Cancel: the item is drawn as it was, and the focus goes to its heading. */
export function cancelEdit(item: HTMLElement, show: () => void): HTMLButtonElement {
  const cancel = () => {
    show();
    focusOn(item.querySelector('h3'));
  };
  return h('button', { type: 'button', onclick: cancel }, 'Cancel');
}

export function actions(...children: Child[]): HTMLElement {
  return h('div', { class: 'actions' }, ...children);
}
