/**
 * The signed-in person's sessions: every browser or device logged in, newest first, each named by
 * its device in words (its User-Agent on hover), the one this browser uses marked "This device"
 * (the API's `current`). Each can be ended on its own; "Log out everywhere" ends them all, this
 * one included.
 *
 * Times are said as "5 minutes ago", kept true while the screen is open: the words are written
 * again every 30 s, and the list is fetched again when the tab comes back into view (other
 * devices may have been active, or ended, meanwhile). No polling while the tab is hidden. This
 * device's session is in use as you look at it: it is "active now", whatever its last refresh.
 */
import { api, type SessionInfo } from '../api';
import { alertBox, formatAgo, formatDate, h, replaceChildren } from '../dom';
import { act, actions } from '../forms';

/** How often the "… ago" words are written again. */
const RETELL_EVERY_MS = 30_000;

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

  /** A moment as "… ago", its date and time on hover; written again by retell(). */
  const ago = (iso: string) => h('time', { datetime: iso, title: formatDate(iso), 'data-ago': '' }, formatAgo(iso));

  const item = (session: SessionInfo) => {
    const li = h(
      'li',
      { class: 'item', 'data-current': session.current ? 'true' : undefined },
      h('strong', { title: session.userAgent ?? undefined }, session.device),
      session.current ? ' ' : null,
      session.current ? h('span', { class: 'badge current' }, 'This device') : null,
      h(
        'p',
        { class: 'meta' },
        'Logged in ',
        ago(session.createdAt),
        session.current ? ', active now' : ', last active ',
        session.current ? null : ago(session.lastUsedAt),
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

  const retell = () => {
    for (const time of list.querySelectorAll<HTMLTimeElement>('time[data-ago]')) {
      time.textContent = formatAgo(time.dateTime);
    }
  };
  const backInView = () => {
    if (document.visibilityState === 'visible') void load();
  };
  // Until the screen is left: the first tick or return to view that finds it gone stops both.
  const timer = setInterval(() => {
    if (!list.isConnected) return leave();
    if (document.visibilityState === 'visible') retell();
  }, RETELL_EVERY_MS);
  const onVisibility = () => (list.isConnected ? backInView() : leave());
  const leave = () => {
    clearInterval(timer);
    document.removeEventListener('visibilitychange', onVisibility);
  };
  document.addEventListener('visibilitychange', onVisibility);

  everywhere.addEventListener('click', () =>
    act(section, alert, async () => {
      await api.logoutEverywhere();
      loggedOutEverywhere();
    }),
  );
  void load();
  return section;
}
