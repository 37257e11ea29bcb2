/**
 * The web client: a hash router over its screens. Public: the posts, one author's posts and one
 * post, log in (with a password or a provider), register, forgot password, and the pages of the
 * e-mails' links (set a new password, verify an address, confirm a new one). Signed in: my posts,
 * notes, sessions, the account. It talks only to the gateway, on the page's own origin.
 */
import './style.css';
import { api, onSessionExpired } from './api';
import { h, replaceChildren } from './dom';
import { onLiveStatus, sessionChanged, startLive } from './live';
import { currentSession, endSession, mayBeSignedIn, noSessionHere } from './session';
import { accountView } from './views/account';
import { authView, type Notice } from './views/auth';
import { emailLinkView } from './views/email-links';
import { myPostsView } from './views/my-posts';
import { notesView } from './views/notes';
import { forgotPasswordView, setPasswordView } from './views/password-reset';
import { authorView, postListView, postView } from './views/posts';
import { sessionsView } from './views/sessions';
import { verifyBanner } from './views/verify-banner';

const view = document.getElementById('view') as HTMLElement;
const nav = document.getElementById('nav') as HTMLElement;
/** Under the bar: the banner that asks to verify the address, while it is not. */
const banner = h('div', { class: 'banner-slot' });
view.before(banner);

/** A message for the login screen, set when the session ended on its own. */
let loginNotice: Notice | undefined;
/** Where to go back to after logging in. */
let returnTo = '#/mine';

function go(hash: string): void {
  if (location.hash === hash) render();
  else location.hash = hash;
}

/** Whether the last screen was rendered signed in: a change is told to the live stream. */
let wasSignedIn: boolean | undefined;

function renderNav(path: string): void {
  const session = currentSession();
  if (wasSignedIn !== undefined && wasSignedIn !== (session !== undefined)) sessionChanged();
  wasSignedIn = session !== undefined;
  const link = (href: string, label: string) =>
    h('a', { href, 'aria-current': path === href.slice(1) ? 'page' : undefined }, label);
  replaceChildren(
    nav,
    link('#/', 'Posts'),
    ...(session
      ? [
          link('#/mine', 'My posts'),
          link('#/notes', 'Notes'),
          link('#/sessions', 'Sessions'),
          link('#/account', 'Account'),
          h('span', { class: 'who', title: 'Signed in' }, session.email),
          h('button', { type: 'button', class: 'link', onclick: logOut }, 'Log out'),
        ]
      : [link('#/login', 'Log in'), link('#/register', 'Register')]),
  );
  replaceChildren(banner, session?.emailVerified === false ? verifyBanner(session, () => renderNav(path)) : null);
}

function logOut(): void {
  // The library forgets the session at once; the server ends it, and clears the cookie, a moment
  // later. The next screen does not wait for that: the person may already be going elsewhere.
  void api.logout().catch(() => undefined);
  endSession();
  loginNotice = undefined;
  go('#/');
}

function screen(path: string, query: URLSearchParams): HTMLElement {
  const signedIn = currentSession() !== undefined;
  const post = /^\/posts\/([^/]+)$/.exec(path);
  if (post?.[1]) return postView(decodeURIComponent(post[1]));
  const author = /^\/authors\/([^/]+)$/.exec(path);
  if (author?.[1]) return authorView(decodeURIComponent(author[1]), query, go);
  switch (path) {
    case '/':
    case '':
      return postListView(query, go);
    case '/login':
    case '/register': {
      if (signedIn) {
        queueMicrotask(() => go(returnTo));
        return h('p', null, 'Already signed in.');
      }
      const notice = loginNotice;
      loginNotice = undefined;
      return authView(path === '/login' ? 'login' : 'register', notice, () => go(returnTo));
    }
    case '/forgot-password':
      return forgotPasswordView();
    case '/reset-password':
      return setPasswordView(query.get('token'), query.get('email'), () => {
        endSession();
        loginNotice = { text: 'Your new password is set. Log in with it.', kind: 'ok' };
        go('#/login');
      });
    case '/verify-email':
    case '/confirm-email-change':
      return emailLinkView(path === '/verify-email' ? 'verify' : 'change', query.get('token'), () => renderNav(path));
    case '/mine':
    case '/notes':
    case '/sessions':
    case '/account':
      if (!signedIn) {
        returnTo = `#${path}`;
        loginNotice ??= { text: 'Please log in first.', kind: 'error' };
        queueMicrotask(() => go('#/login'));
        return h('p', null, 'Please log in.');
      }
      if (path === '/sessions') {
        return sessionsView(() => {
          endSession();
          loginNotice = { text: 'You are logged out everywhere.', kind: 'ok' };
          go('#/login');
        });
      }
      if (path === '/account') return accountView();
      return path === '/mine' ? myPostsView() : notesView();
    default:
      return h(
        'section',
        { class: 'card narrow' },
        h('h1', null, 'Page not found'),
        h('a', { href: '#/' }, 'Go to the posts'),
      );
  }
}

/**
 * The address the current screen was rendered for, as it stands after rendering: a screen may
 * rewrite it (the set-password screen takes its token out).
 */
let rendered: string | undefined;

/** Each screen's title is its heading's, kept in step as the screen fills in (a post, once loaded). */
const SITE = 'Content service';
new MutationObserver(() => {
  const heading = view.querySelector('h1')?.textContent?.trim();
  const title = heading ? `${heading} · ${SITE}` : SITE;
  if (document.title !== title) document.title = title;
}).observe(view, { subtree: true, childList: true, characterData: true });

function render(): void {
  const [path = '/', search = ''] = location.hash.replace(/^#/, '').split('?');
  renderNav(path || '/');
  replaceChildren(view, screen(path || '/', new URLSearchParams(search)));
  view.focus({ preventScroll: true });
  rendered = location.hash;
}

/**
 * Back from a provider (`?flow=…#code=…`, see views/provider-buttons.ts): that sign-in is finished
 * before any screen is rendered, and the address is put back to a screen of the router's, without
 * the code; why it failed, if it did, is said on the login screen.
 */
function finishProviderSignIn(): Promise<unknown> {
  return api.finishSignIn().then(
    () => history.replaceState(null, '', `/${returnTo}`),
    (error: Error) => {
      loginNotice = { text: error.message, kind: 'error' };
      history.replaceState(null, '', '/#/login');
    },
  );
}

onSessionExpired((message) => {
  // Several may learn it at once (a request, and the live stream renewing its token): the first
  // sends the person to log in, with where they were; the login screen is not drawn again under
  // what they are typing, nor its way back lost.
  if (location.hash.startsWith('#/login')) return;
  loginNotice = { text: message, kind: 'error' };
  returnTo = location.hash.startsWith('#/mine') || location.hash.startsWith('#/notes') ? location.hash : '#/mine';
  go('#/login');
});

// Two address changes in one task queue two events that both find the latest address. Render it
// once: the second would render the set-password screen again, after its token has been taken out.
// A session this browser already has (a reload, another tab) is taken up before any screen is
// rendered: the first, and one the address moved to meanwhile. Only when there may be one
// (session.ts): a visitor who is not signed in sends no refresh that could only be refused. A
// browser back from a provider has the session of that sign-in instead.
const resumed = new URLSearchParams(location.search).has('flow')
  ? finishProviderSignIn()
  : mayBeSignedIn()
    ? api.resume().then(
        (session) => {
          if (!session) noSessionHere();
          return session;
        },
        () => undefined,
      )
    : Promise.resolve(undefined);
const renderOnce = () => {
  if (location.hash !== rendered) render();
};
window.addEventListener('hashchange', () => void resumed.then(renderOnce));
void resumed.then(() => {
  renderOnce();
  startLive();
});

const LIVE_WORDS: Record<string, string> = {
  connecting: 'Connecting…',
  live: 'Live',
  reconnecting: 'Reconnecting…',
  ended: 'Not live',
};
const indicator = document.getElementById('live') as HTMLElement;
onLiveStatus((status) => {
  indicator.dataset.status = status;
  indicator.textContent = LIVE_WORDS[status] ?? status;
});
