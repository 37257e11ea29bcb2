/**
 * Log in and register: one form, two purposes, and under the login a button per sign-in provider.
 * A successful answer starts the session.
 */
import { api } from '../api';
import { alertBox, h } from '../dom';
import { actions, busy, field, input, showError } from '../forms';
import { startSession } from '../session';
import { providerButtons } from './provider-buttons';

/** A message for the screen as it opens: why the person is here, or what just happened. */
export interface Notice {
  text: string;
  kind: 'error' | 'ok';
}

export function authView(mode: 'login' | 'register', notice: Notice | undefined, done: () => void): HTMLElement {
  const registering = mode === 'register';
  const alert = alertBox();
  // `username`: what password managers file the password under (the account's name is its address).
  const email = input('email', { type: 'email', autocomplete: 'username', required: true });
  const password = input('password', {
    type: 'password',
    autocomplete: registering ? 'new-password' : 'current-password',
    required: true,
    minLength: registering ? 8 : undefined,
  });
  const displayName = input('displayName', { autocomplete: 'nickname', maxLength: 50 });
  const form = h(
    'form',
    { class: 'card narrow', novalidate: true },
    h('h1', null, registering ? 'Create an account' : 'Log in'),
    alert,
    field('E-mail', email),
    field('Password', password, registering ? 'At least 8 characters.' : undefined),
    registering ? field('Your name (optional)', displayName, 'Shown on your posts. You can change it later.') : null,
    actions(h('button', { type: 'submit', class: 'primary' }, registering ? 'Create account' : 'Log in')),
    // Signing in with a provider makes the account if need be: the login screen offers it alone.
    registering ? null : providerButtons(alert),
    h(
      'p',
      { class: 'switch' },
      registering ? 'Already have an account? ' : 'New here? ',
      h('a', { href: registering ? '#/login' : '#/register' }, registering ? 'Log in' : 'Create an account'),
    ),
    registering ? null : h('p', { class: 'switch' }, h('a', { href: '#/forgot-password' }, 'Forgot password?')),
  );
  if (notice) alert.show(notice.text, notice.kind);

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const address = email.value.trim();
    if (!address || !password.value) {
      alert.show('Please enter your e-mail and password.');
      return;
    }
    void busy(form, async () => {
      try {
        // The library keeps the session; the address is kept as the API keeps it, in lower case.
        const session = registering
          ? await api.register(address, password.value, displayName.value.trim() || undefined)
          : await api.login(address, password.value);
        startSession({ ...session, email: address.toLowerCase() });
        done();
      } catch (error) {
        showError(form, alert, error);
      }
    });
  });
  queueMicrotask(() => email.focus());
  return form;
}
