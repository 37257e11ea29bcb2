/**
 * An item of a list edited where it stands: the item gives way to a form with its fields, Save
 * changes and Cancel. Saved, the list is drawn again and the focus goes to the item's heading as
 * drawn again; refused, the form says why, each field's message beside its field; cancelled, the
 * item is drawn as it was. My posts and Notes edit their items so.
 */
import { alertBox, type Child, focusOn, h, replaceChildren } from './dom';
import { actions, cancelEdit, onSubmit } from './forms';

export interface ItemEdit {
  /** The form's heading, in place of the item's ("Edit post"). */
  heading: string;
  /** The form's fields, in order. */
  fields: Child[];
  /** The control that has the focus when the form opens. */
  first: HTMLElement;
  /** Draws the item as it was (Cancel). */
  show: () => void;
  /** Sends the changes; what it throws is shown in the form. */
  save: () => Promise<unknown>;
  /** Draws the list again, once the changes are saved. */
  refresh: () => Promise<void>;
  /** The item's heading in the list drawn again. */
  redrawn: () => HTMLElement | null | undefined;
}

export function editInPlace(item: HTMLElement, edit: ItemEdit): void {
  const editAlert = alertBox();
  const form = h(
    'form',
    { novalidate: true },
    editAlert,
    ...edit.fields,
    actions(h('button', { type: 'submit', class: 'primary' }, 'Save changes'), cancelEdit(item, edit.show)),
  );
  onSubmit(form, editAlert, async () => {
    await edit.save();
    await edit.refresh();
    // The item was drawn again: the focus goes to its heading.
    focusOn(edit.redrawn());
  });
  replaceChildren(item, h('h3', null, edit.heading), form);
  edit.first.focus();
}
