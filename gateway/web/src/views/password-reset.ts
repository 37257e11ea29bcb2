/**
 * Forgot password: ask for an e-mail with a link. Set a new password: the screen that link opens,
 * with the token in the address's fragment (never sent to any server by the browser).
 */
import { ApiError, api } from '../api';
import { alertBox, h } from '../dom';
import { actions, busy, field, input, showError } from '../forms';

const LINK_UNUSABLE = 'This link has expired or was already used. Ask for a new one.';

export function forgotPasswordView(): HTMLElement {
  const alert = alertBox();
  const email = input('email', { type: 'email', autocomplete: 'email', required: true });
  const form = h(
    'form',
    { class: 'card narrow', novalidate: true },
    h('h1', null, 'Forgot password'),
    h('p', null, 'Enter the address you registered with. We will e-mail you a link to set a new password.'),
    alert,
    field('E-mail', email),
    actions(h('button', { type: 'submit', class: 'primary' }, 'Send the link')),
    h('p', { class: 'switch' }, h('a', { href: '#/login' }, 'Back to log in')),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const address = email.value.trim();
    if (!address) {
      alert.show('Please enter your e-mail.');
      return;
    }
    void busy(form, async () => {
      try {
        await api.requestPasswordReset(address);
        alert.show(`If an account exists for ${address}, an e-mail with a link is on its way.`, 'ok');
      } catch (error) {
        showError(form, alert, error);
      }
    });
  });
  queueMicrotask(() => email.focus());
  return form;
}

export function setPasswordView(token: string | null, email: string | null, done: () => void): HTMLElement {
  // The token leaves the address bar (and the history) as soon as the screen has it.
  history.replaceState(null, '', '#/reset-password');
  const alert = alertBox();
  const password = input('newPassword', {
    type: 'password',
    autocomplete: 'new-password',
    required: true,
    minLength: 8,
  });
  const form = h(
    'form',
    { class: 'card narrow', novalidate: true },
    h('h1', null, 'Set a new password'),
    alert,
    // The account the password is for (from the link), where password managers look for it.
    email
      ? field('Account', input('username', { type: 'email', autocomplete: 'username', value: email, readOnly: true }))
      : null,
    field('New password', password, 'At least 8 characters.'),
    actions(h('button', { type: 'submit', class: 'primary' }, 'Set password')),
    h('p', { class: 'switch' }, h('a', { href: '#/forgot-password' }, 'Send a new link')),
  );
  if (!token) alert.show('This link is incomplete. Ask for a new one.');
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    if (!password.value) {
      alert.show('Please enter a new password.');
      return;
    }
    void busy(form, async () => {
      try {
        await api.confirmPasswordReset(token ?? '', password.value);
        done();
      } catch (error) {
        // Spent, expired or mangled: said in terms of the link the person followed.
        if (
          error instanceof ApiError &&
          (error.status === 400 || error.status === 401) &&
          error.fieldErrors.length === 0
        ) {
          alert.show(LINK_UNUSABLE);
        } else showError(form, alert, error);
      }
    });
  });
  queueMicrotask(() => password.focus());
  return form;
}
