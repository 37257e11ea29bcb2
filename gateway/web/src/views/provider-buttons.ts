/**
 * A button per sign-in provider (`GET /api/auth/providers`), under the login form.
 * Each sends the whole page to the provider, never a popup (which Safari and installed web apps
 * block); the provider sends it back to this page's origin, where main.ts finishes the sign-in.
 * No provider, or none that can be listed: nothing is shown, and the password form is the way in.
 */
import { api } from '../api';
import { type AlertBox, h, replaceChildren } from '../dom';
import { busy } from '../forms';

export function providerButtons(alert: AlertBox): HTMLElement {
  const box = h('div', { class: 'providers', hidden: true });
  void api.providers().then((providers) => {
    if (providers.length === 0) return;
    replaceChildren(
      box,
      h('p', { class: 'or' }, 'or'),
      ...providers.map(({ id, name }) =>
        h(
          'button',
          {
            type: 'button',
            onclick: () =>
              busy(box, async () => {
                try {
                  location.assign(await api.beginSignIn(id));
                } catch (error) {
                  alert.show((error as Error).message);
                }
              }),
          },
          `Sign in with ${name}`,
        ),
      ),
    );
    box.hidden = false;
  });
  return box;
}
