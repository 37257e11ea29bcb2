/**
 * The banner that stays under the bar until the signed-in person's address is verified, with
 * "Send the link again" (one a minute: past it, the banner says how long to wait).
 */
import { ApiError, api } from '../api';
import { h } from '../dom';
import { busy } from '../forms';
import { type Session, startSession } from '../session';

export function verifyBanner(session: Session, verified: () => void): HTMLElement {
  const status = h('span', { role: 'status' });
  const again = h('button', { type: 'button', class: 'link' }, 'Send the link again');
  const banner = h(
    'div',
    { class: 'banner', role: 'region', 'aria-label': 'Your address is not verified' },
    h('span', null, `Please verify your e-mail address, ${session.email}: follow the link we e-mailed you.`),
    again,
    status,
  );
  again.addEventListener('click', () =>
    busy(banner, async () => {
      try {
        await api.requestEmailVerification();
        status.textContent = `A new link is on its way to ${session.email}.`;
      } catch (error) {
        if (error instanceof ApiError && error.status === 409) {
          // Verified meanwhile (in another tab, say): the banner goes.
          startSession({ ...session, emailVerified: true });
          verified();
          return;
        }
        status.textContent = (error as Error).message;
      }
    }),
  );
  return banner;
}
