/**
 * The signed-in person's sessions: every browser or device logged in, newest first. Each can be
 * ended on its own; "Log out everywhere" ends them all, this one included.
 */
import { api, type SessionInfo } from '../api';
import { alertBox, formatDate, h, replaceChildren } from '../dom';
import { act, actions } from '../forms';

export function sessionsView(loggedOutEverywhere: () => void): HTMLElement {
  const alert = alertBox();
  const list = h('ul', { class: 'items', 'aria-label': 'Sessions' });
  const everywhere = h('button', { type: 'button', class: 'danger' }, 'Log out everywhere');
  const section = h(
    'section',
    { class: 'card' },
    h('h1', null, 'Sessions'),
    h('p', null, 'Every browser and device where you are logged in. End one you do not recognise.'),
    alert,
    list,
    actions(everywhere),
  );

  const item = (session: SessionInfo, index: number) => {
    const li = h(
      'li',
      { class: 'item' },
      h('strong', null, session.userAgent ?? 'Unknown browser'),
      h(
        'p',
        { class: 'meta' },
        `Logged in ${formatDate(session.createdAt)}, last active ${formatDate(session.lastUsedAt)}`,
        index === 0 ? ' (newest)' : '',
      ),
    );
    li.append(
      actions(
        h(
          'button',
          {
            type: 'button',
            onclick: () =>
              act(li, alert, async () => {
                await api.endSession(session.id);
                await load();
              }),
          },
          'End this session',
        ),
      ),
    );
    return li;
  };

  async function load(): Promise<void> {
    try {
      const sessions = await api.listSessions();
      replaceChildren(list, ...(sessions.length ? sessions.map(item) : [h('li', null, 'No session.')]));
    } catch (error) {
      alert.show((error as Error).message);
    }
  }

  everywhere.addEventListener('click', () =>
    act(section, alert, async () => {
      await api.logoutEverywhere();
      loggedOutEverywhere();
    }),
  );
  void load();
  return section;
}
