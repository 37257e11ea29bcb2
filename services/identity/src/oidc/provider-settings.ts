/**
 * The OpenID Connect providers people may sign in with, from the environment:
 * `OIDC_PROVIDERS=acme,corp`, then for each `OIDC_<NAME>_ISSUER`, `OIDC_<NAME>_CLIENT_ID`,
 * `OIDC_<NAME>_CLIENT_SECRET` and an optional `OIDC_<NAME>_NAME` (what the button says; the name
 * itself by default), where `<NAME>` is the name in capitals.
 *
 * The boot is refused, naming every key that is wrong, for a name that is not 1 to 20 of
 * `[a-z0-9]`, a name given twice, a missing key, or an issuer that is neither https nor http on
 * loopback. An issuer on loopback is a provider on this very machine, such as the development
 * provider of `npm start`, whose login page takes any name: it is refused unless PUBLIC_URL is on
 * loopback too, so such a provider can never sign anyone in to a deployment others reach.
 */
import { ConfigError, settingOf } from '@cs/config';

export interface ProviderSettings {
  /** The name in paths and settings: `/api/auth/oidc/<id>/start`. */
  id: string;
  /** What a sign-in button says. */
  name: string;
  issuer: string;
  clientId: string;
  clientSecret: string;
}

export const PROVIDER_NAME = /^[a-z0-9]{1,20}$/;

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/** Whether `url` names this machine: a provider there may speak plain http. */
export function onLoopback(url: string): boolean {
  return LOOPBACK.has(new URL(url).hostname);
}

export function readProviderSettings(
  names: readonly string[],
  source: Record<string, string | undefined>,
  publicUrl: string,
): ProviderSettings[] {
  const problems: string[] = [];
  const providers: ProviderSettings[] = [];
  for (const [index, id] of names.entries()) {
    if (!PROVIDER_NAME.test(id)) {
      problems.push(`OIDC_PROVIDERS must name each provider with 1 to 20 lowercase letters or digits (got "${id}")`);
      continue;
    }
    if (names.indexOf(id) !== index) {
      problems.push(`OIDC_PROVIDERS names "${id}" twice`);
      continue;
    }
    const key = (what: string) => `OIDC_${id.toUpperCase()}_${what}`;
    // Each may be given as a file too (`OIDC_SSO_CLIENT_SECRET_FILE`), as every setting may:
    // '' when not given, undefined when its file is a problem (told already).
    const given = (what: string): string | undefined => {
      try {
        return settingOf(source, key(what))?.trim() ?? '';
      } catch (err) {
        if (!(err instanceof ConfigError)) throw err;
        problems.push(...err.problems);
        return undefined;
      }
    };
    const read = (what: string) => {
      const value = given(what);
      if (value === '') problems.push(`${key(what)} is required`);
      return value ?? '';
    };
    const issuer = read('ISSUER').replace(/\/+$/, '');
    const clientId = read('CLIENT_ID');
    const clientSecret = read('CLIENT_SECRET');
    const issuerProblem = issuer && issuerProblemOf(issuer, publicUrl);
    if (issuerProblem) problems.push(`${key('ISSUER')} ${issuerProblem}`);
    providers.push({ id, name: given('NAME') || id, issuer, clientId, clientSecret });
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return providers;
}

function issuerProblemOf(issuer: string, publicUrl: string): string | undefined {
  if (!URL.canParse(issuer)) return `must be a URL (got "${issuer}")`;
  const { protocol } = new URL(issuer);
  const loopback = onLoopback(issuer);
  if (protocol !== 'https:' && !(protocol === 'http:' && loopback)) return 'must be https (or http on loopback)';
  if (loopback && !onLoopback(publicUrl)) {
    return 'is on loopback, a provider on this machine, which is refused when PUBLIC_URL is not on loopback';
  }
  return undefined;
}
