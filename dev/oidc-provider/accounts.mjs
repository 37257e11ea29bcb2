/**
 * Who logged in, and what the provider says of them. The subject is the name typed on the login
 * page, trimmed: the same name is the same person, from one run to the next.
 *
 * In `dev` mode nothing is kept: the claims follow from the name, the address is
 * `<name as letters, digits, dots and dashes>@dev.invalid` (a domain that can never receive mail,
 * RFC 2606), and `email_verified` is left out, so that the relying party never takes it as proof.
 * In `test` mode the page's answers for a name are kept (in memory, for this run) and given as
 * they were typed: an empty e-mail gives no `email` claim, and the checkbox is `email_verified`.
 */
const MAX_NAME = 100;

export function accountStore(mode) {
  /** name → { email, verified }, in test mode. */
  const answers = new Map();

  const claimsOf = (name) => {
    if (mode === 'dev') return { sub: name, name, email: `${slug(name)}@dev.invalid` };
    const { email, verified } = answers.get(name) ?? { email: '', verified: false };
    return { sub: name, name, ...(email ? { email, email_verified: verified } : {}) };
  };

  return {
    /** The account id for a submitted login form, or undefined when it names no one. */
    loggedIn(form) {
      const name = (form.get('name') ?? '').trim().slice(0, MAX_NAME);
      if (!name) return undefined;
      if (mode === 'test') {
        answers.set(name, { email: (form.get('email') ?? '').trim(), verified: form.get('email_verified') === 'on' });
      }
      return name;
    },
    /** oidc-provider's findAccount: the claims are read when a token or userinfo is made. */
    find(id) {
      return { accountId: id, claims: () => claimsOf(id) };
    },
  };
}

function slug(name) {
  return (
    name
      .toLowerCase()
      .replace(/[^a-z0-9.-]+/g, '-')
      .replace(/^[-.]+|[-.]+$/g, '')
      .slice(0, 64) || 'someone'
  );
}
