/**
 * Why a sign-in with a provider came back without a session, in words: the reasons of the API's
 * `#error=` (its callback), and the client library's own for a flow this browser did not begin.
 */
const SENTENCES: Record<string, string> = {
  access_denied: 'The sign-in was cancelled at the provider. You can try again, or log in with your password.',
  provider_error: 'The provider could not sign you in just now. Please try again in a moment.',
  email_missing: 'The provider did not tell us your e-mail address, which an account needs. Please register instead.',
  email_in_use:
    'An account already uses the e-mail address this provider gave, and the provider did not confirm it is yours. Log in to that account with its password instead.',
  no_flow:
    'This sign-in was not started in this browser, or it was finished already. Please start it again from this page.',
};

export function signInFailure(reason: string): string {
  return SENTENCES[reason] ?? 'The sign-in did not complete. Please try again.';
}
