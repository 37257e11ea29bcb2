/**
 * A real OpenID Connect provider for development and tests, as Mailpit is a real SMTP server: the
 * certified `oidc-provider` package on loopback, with its own login page and nothing kept on disk.
 *
 *   node dev/oidc-provider/provider.mjs --port 4010 --mode dev|test
 *
 * The clients come from OIDC_PROVIDER_CLIENTS, a JSON array of client metadata as the package takes
 * it (`client_id`, `client_secret`, `redirect_uris`, and optionally `application_type: 'native'`,
 * whose loopback redirect URIs match on any port: a test's gateway listens on a free one).
 *
 * Its login page takes any name, and the name is the subject (`sub`). What it says of the address:
 * - `dev` (`npm start`): the e-mail is `<name>@dev.invalid`, and `email_verified` is never asserted,
 *   since anyone can type any name: it must never vouch for an address, nor link to an account.
 * - `test` (jest): the page also asks for an e-mail and has an "E-mail verified" checkbox, so that
 *   the suites can play a provider that vouches for an address, one that does not, and one that
 *   gives none (an empty e-mail). The last answers given for a name are its claims.
 *
 * Consent is granted without asking (the page that would ask it answers at once); PKCE (S256) is required of every client; the RS256 signing
 * key and the cookie keys are made at start, so each run is a new provider with the same issuer.
 * Ready when `/.well-known/openid-configuration` answers.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import Provider from 'oidc-provider';
import { accountStore } from './accounts.mjs';
import { loginPage } from './login-page.mjs';

const { values } = parseArgs({
  options: {
    port: { type: 'string' },
    host: { type: 'string', default: '127.0.0.1' },
    mode: { type: 'string', default: 'dev' },
  },
});
const mode = values.mode;
if (mode !== 'dev' && mode !== 'test') throw new Error(`--mode must be dev or test, not ${mode}`);
const port = Number(values.port);
if (!Number.isInteger(port) || port <= 0 || port > 65535) throw new Error('--port must name a port');
const clients = JSON.parse(process.env.OIDC_PROVIDER_CLIENTS ?? '[]');
const issuer = `http://${values.host}:${port}`;

const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const signingKey = {
  ...privateKey.export({ format: 'jwk' }),
  alg: 'RS256',
  use: 'sig',
  kid: randomBytes(8).toString('hex'),
};
const accounts = accountStore(mode);

const provider = new Provider(issuer, {
  clients,
  jwks: { keys: [signingKey] },
  cookies: { keys: [randomBytes(32).toString('hex')] },
  claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
  scopes: ['openid', 'email', 'profile'],
  findAccount: (_ctx, id) => accounts.find(id),
  features: { devInteractions: { enabled: false } },
  pkce: { required: () => true },
  responseTypes: ['code'],
  interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
  // The package's own error page names the error; a test reads it when a flow goes wrong.
  renderError: (ctx, out) => {
    ctx.type = 'html';
    ctx.body = `<!doctype html><title>Error</title><pre>${escapeHtml(JSON.stringify(out, null, 2))}</pre>`;
  },
});

const handleProvider = provider.callback();

/** The login page, ours; everything else is the provider's. */
async function handle(req, res) {
  const match = /^\/interaction\/([\w-]+)(\/login)?$/.exec(req.url ?? '');
  if (!match) return handleProvider(req, res);
  const details = await provider.interactionDetails(req, res);
  if (req.method === 'GET' && !match[2] && details.prompt.name === 'consent') {
    // Consent without asking: what the client asked for, granted (native clients are always asked).
    const grant = details.grantId
      ? await provider.Grant.find(details.grantId)
      : new provider.Grant({ clientId: details.params.client_id, accountId: details.session.accountId });
    grant.addOIDCScope(String(details.params.scope));
    const grantId = await grant.save();
    await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
    return;
  }
  if (req.method === 'GET' && !match[2]) {
    res.setHeader('content-type', 'text/html; charset=utf-8');
    res.end(loginPage({ uid: details.uid, client: details.params.client_id, mode }));
    return;
  }
  if (req.method === 'POST' && match[2]) {
    const form = new URLSearchParams(await bodyOf(req));
    const accountId = accounts.loggedIn(form);
    if (!accountId) {
      res.statusCode = 400;
      res.setHeader('content-type', 'text/html; charset=utf-8');
      res.end(loginPage({ uid: details.uid, client: details.params.client_id, mode, error: 'A name is needed.' }));
      return;
    }
    await provider.interactionFinished(req, res, { login: { accountId } }, { mergeWithLastSubmission: false });
    return;
  }
  res.statusCode = 405;
  res.end();
}

function bodyOf(req) {
  return new Promise((resolve, reject) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk) => {
      body += chunk;
      if (body.length > 10_000) req.destroy(new Error('The form is too long.'));
    });
    req.once('end', () => resolve(body));
    req.once('error', reject);
  });
}

function escapeHtml(text) {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const server = createServer((req, res) => {
  handle(req, res).catch((err) => {
    // An interaction that expired or was finished already: the page says so, and the process goes on.
    res.statusCode = err.statusCode ?? 500;
    res.setHeader('content-type', 'text/html; charset=utf-8');
    res.end(`<!doctype html><title>Error</title><p>${escapeHtml(String(err.message))}</p>`);
  });
});
server.listen(port, values.host, () => {
  console.log(`oidc-provider (${mode}) at ${issuer}, ${clients.length} client(s)`);
});
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.once(signal, () => {
    server.close();
    server.closeAllConnections();
    process.exit(0);
  });
}
