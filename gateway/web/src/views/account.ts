/**
 * The account's settings: its e-mail address (whether it is verified, and changing it: a link goes
 * to the new address, which takes over once it is followed) and the providers linked to it, each
 * of which can be unlinked unless it is the last way to log in.
 */
import { ApiError, api, type Identity } from '../api';
import { alertBox, formatDate, h, replaceChildren } from '../dom';
import { act, actions, field, input, onSubmit } from '../forms';
import { currentSession } from '../session';

export function accountView(): HTMLElement {
  return h('div', null, h('h1', null, 'Account'), emailSection(), identitiesSection());
}

function emailSection(): HTMLElement {
  const session = currentSession();
  const alert = alertBox();
  const newEmail = input('newEmail', { type: 'email', autocomplete: 'email', required: true });
  const password = input('password', { type: 'password', autocomplete: 'current-password', required: true });
  const form = h(
    'form',
    { class: 'card', novalidate: true, 'aria-label': 'Change your e-mail address' },
    h('h2', null, 'E-mail address'),
    h(
      'p',
      null,
      `You log in with ${session?.email ?? 'your address'}`,
      session?.emailVerified === true ? ', which is verified.' : '.',
    ),
    alert,
    field('New e-mail address', newEmail),
    field(
      'Your password',
      password,
      'To be sure it is you who asks. An account made by signing in with a provider has none: sign in with it again, then write anything here within 5 minutes.',
    ),
    actions(h('button', { type: 'submit', class: 'primary' }, 'Change my address')),
  );
  onSubmit(form, alert, async () => {
    const address = newEmail.value.trim();
    if (!address || !password.value) {
      alert.show('Please enter the new address and your password.');
      return;
    }
    try {
      await api.requestEmailChange(address, password.value);
    } catch (error) {
      // A password that is not the account's; the API's own sentence for an account without one.
      if (error instanceof ApiError && error.message === 'Invalid credentials.') {
        throw new ApiError('That password is not right.', 401);
      }
      throw error;
    }
    form.reset();
    alert.show(
      `We e-mailed a link to ${address}. Your address changes when you follow it; until then, log in with ${session?.email ?? 'your current address'}.`,
      'ok',
    );
  });
  return form;
}

function identitiesSection(): HTMLElement {
  const alert = alertBox();
  const list = h('ul', { class: 'items', 'aria-label': 'Linked providers' });
  const section = h(
    'section',
    { class: 'card' },
    h('h2', null, 'Linked sign-in providers'),
    h('p', null, 'You can sign in with each of these instead of your password.'),
    alert,
    list,
  );

  const item = (identity: Identity, names: Map<string, string>) => {
    const li = h(
      'li',
      { class: 'item' },
      h('strong', null, names.get(identity.provider) ?? identity.provider),
      h('p', { class: 'meta' }, identity.email ?? 'No address given', ' · linked ', formatDate(identity.createdAt)),
    );
    li.append(
      actions(
        h(
          'button',
          {
            type: 'button',
            onclick: () =>
              act(li, alert, async () => {
                await api.unlinkIdentity(identity._id);
                await load();
                alert.show(`${names.get(identity.provider) ?? identity.provider} is unlinked.`, 'ok');
              }),
          },
          'Unlink',
        ),
      ),
    );
    return li;
  };

  async function load(): Promise<void> {
    try {
      const [identities, providers] = await Promise.all([api.identities(), api.providers()]);
      const names = new Map(providers.map((p) => [p.id, p.name]));
      replaceChildren(
        list,
        ...(identities.length
          ? identities.map((identity) => item(identity, names))
          : [h('li', null, 'No provider is linked to your account.')]),
      );
    } catch (error) {
      alert.show((error as Error).message);
    }
  }
  void load();
  return section;
}
