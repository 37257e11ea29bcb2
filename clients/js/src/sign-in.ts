/**
 * Signing in with an OpenID Connect provider, by a full-page redirect: never a popup, which Safari
 * and installed web apps block. `beginSignIn` makes a PKCE verifier and keeps it in the lasting
 * area (localStorage in a browser) under a random flow key, which rides in the query of the address
 * the person comes back to: the flow outlives the navigation away and back, and a second flow, in
 * another tab, keeps its own. `finishSignIn`, on that page, redeems the login code of its fragment
 * with the verifier, which only this browser holds: a code planted in someone else's browser is
 * useless there. Also the providers to offer.
 */
import type { Calls, Fetch, Listed, Raw, SessionKeeping } from './calls.js';
import { SignInError } from './errors.js';
import { lastingArea } from './lasting-area.js';
import { adopt } from './session-account.js';

/** A provider to offer: `id` for beginSignIn, `name` for the person. */
export type Provider = Listed<'/api/auth/providers'>;

/** Where a flow's verifier is kept, by its flow key, as `<when it began>.<verifier>`. */
const PREFIX = 'content-service.sign-in.';
/** A flow not finished within an hour is dropped: the API forgot its state long before. */
const FLOW_LIFE_MS = 3_600_000;

const base64url = (bytes: ArrayBuffer) =>
  btoa(String.fromCharCode(...new Uint8Array(bytes)))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');

export function signInCalls(raw: Raw, run: Calls['run'], keeping: SessionKeeping, doFetch: Fetch) {
  const area = lastingArea();
  return {
    /** The providers one can sign in with, `[{id, name}]`. */
    providers: () => run(() => raw.GET('/api/auth/providers')),
    /**
     * The address that starts signing in with `provider` (`location.assign` it): the person comes
     * back to `redirect`, where `finishSignIn(location)` ends the flow.
     */
    beginSignIn: async (provider: string, { redirect }: { redirect: string }): Promise<string> => {
      // Forgets the flows begun too long ago first: a tab closed on the provider's page leaves one.
      for (const name of area.keys()) {
        if (name.startsWith(PREFIX) && !(Date.now() - Number(area.getItem(name)?.split('.')[0]) < FLOW_LIFE_MS)) {
          area.removeItem(name);
        }
      }
      // Random UUIDs are of the verifier's alphabet: two of them, 244 random bits.
      const flow = crypto.randomUUID();
      const verifier = crypto.randomUUID() + crypto.randomUUID();
      area.setItem(PREFIX + flow, `${Date.now()}.${verifier}`);
      const back = new URL(redirect);
      back.hash = '';
      back.searchParams.set('flow', flow);
      const challenge = base64url(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier)));
      const query = new URLSearchParams({ redirect: back.href, challenge });
      return keeping.authUrl(`/api/auth/oidc/${encodeURIComponent(provider)}/start?${query}`);
    },
    /**
     * Ends the flow the person came back from (the page's `location`, with `#code=` or `#error=`):
     * the session is kept as a login's is. A SignInError when the provider or the API said no, or
     * when the flow was not begun in this browser.
     */
    finishSignIn: async (location: string | URL | Location) => {
      const url = new URL(String(location));
      const answer = new URLSearchParams(url.hash.slice(1));
      const key = PREFIX + url.searchParams.get('flow');
      const verifier = area.getItem(key)?.split('.')[1];
      area.removeItem(key);
      const code = answer.get('code');
      if (!code) throw new SignInError(answer.get('error') ?? 'no_code');
      if (!verifier) throw new SignInError('no_flow');
      const pair = await run(() =>
        raw.POST('/api/auth/oidc/exchange', { body: { code, verifier }, headers: keeping.modeHeaders }),
      );
      return adopt(keeping, doFetch, pair);
    },
  };
}
