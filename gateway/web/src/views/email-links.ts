/**
 * The pages the e-mails' links open: verify an address (`#/verify-email?token=…`) and confirm a
 * new one (`#/confirm-email-change?token=…`). Opening one changes nothing: mail scanners open
 * links before their person does, so the token is used only when the person presses "Confirm".
 */
import { ApiError, api } from '../api';
import { alertBox, focusOn, h } from '../dom';
import { actions, busy } from '../forms';
import { currentSession } from '../session';

const PAGES = {
  verify: {
    path: '#/verify-email',
    title: 'Verify your e-mail address',
    ask: 'Press Confirm to verify that this address is yours.',
    confirm: (token: string) => api.confirmEmailVerification(token),
    done: (email: string) => `Your address ${email} is verified.`,
    unusable: 'This link has expired, was already used, or a newer one was sent. Ask for a new one.',
  },
  change: {
    path: '#/confirm-email-change',
    title: 'Confirm your new e-mail address',
    ask: 'Press Confirm to move your account to this address.',
    confirm: (token: string) => api.confirmEmailChange(token),
    done: (email: string) => `Your account’s address is now ${email}. Log in with it from now on.`,
    unusable: 'This link has expired, was already used, or a newer one was sent. Change your address again.',
  },
} as const;

export function emailLinkView(kind: keyof typeof PAGES, token: string | null, changed: () => void): HTMLElement {
  const page = PAGES[kind];
  // The token leaves the address bar (and the history) as soon as the screen has it.
  history.replaceState(null, '', page.path);
  const alert = alertBox();
  const confirm = h('button', { type: 'button', class: 'primary' }, 'Confirm');
  const next = h('p', { class: 'switch', hidden: true });
  const section = h(
    'section',
    { class: 'card narrow' },
    h('h1', null, page.title),
    h('p', null, page.ask),
    alert,
    actions(confirm),
    next,
  );
  if (!token) {
    alert.show('This link is incomplete. Open it again from the e-mail.');
    confirm.disabled = true;
  }
  confirm.addEventListener('click', () =>
    busy(section, async () => {
      try {
        const { email } = await page.confirm(token ?? '');
        confirm.hidden = true;
        alert.show(page.done(email), 'ok');
        next.replaceChildren(
          currentSession() ? h('a', { href: '#/mine' }, 'Go to my posts') : h('a', { href: '#/login' }, 'Log in'),
        );
        next.hidden = false;
        changed();
      } catch (error) {
        alert.show(
          error instanceof ApiError && error.status === 400 && error.fieldErrors.length === 0
            ? page.unusable
            : (error as Error).message,
        );
      }
      focusOn(alert);
    }),
  );
  queueMicrotask(() => confirm.focus());
  return section;
}
