/**
 * Scenario 11's accounts, registered from 127.0.0.1, which no stream uses, and what they own: the
 * bystander (whose device logged in before), the flipper's post, the streamer's notes, the token
 * logged out over and over, the bulk publisher.
 */

import { postJson } from './requests';
import { BUS_SEED, TAGS } from './settings';

export type Accounts = Awaited<ReturnType<typeof prepareAccounts>>;

export async function prepareAccounts(gw: string) {
  // Two accounts, registered from 127.0.0.1, which no stream uses: the bystander, and the
  // account that flips its own post (published once before the attack, and newest of all).
  const password = 'bench-password';
  const register = async (who: string) =>
    String((await postJson(`${gw}/api/auth/register`, { email: `${who}-${process.pid}@example.com`, password })).token);
  const bystanderEmail = `bystander-${process.pid}@example.com`;
  const bystanderAuth = { authorization: `Bearer ${await register('bystander')}` };
  const flipHeaders = { authorization: `Bearer ${await register('flipper')}` };
  const flipPost = await postJson(
    `${gw}/api/posts`,
    { title: 'Flipped', body: 'A post its author keeps flipping.', tags: [TAGS[0]] },
    flipHeaders,
  );
  const flipPath = `/api/posts/${String(flipPost._id)}`;
  await postJson(`${gw}${flipPath}`, { status: 'published' }, flipHeaders, 'PUT');

  // The accounts of the newer attacks: the one whose streams are never read (and whose notes
  // seed the bus), the one whose access token is logged out over and over, the bulk publisher.
  const streamerHeaders = { authorization: `Bearer ${await register('streamer')}` };
  const noteOf = async (title: string) =>
    `/api/notes/${String((await postJson(`${gw}/api/notes`, { title, body: 'Updated with big bodies.' }, streamerHeaders))._id)}`;
  const bigNotePath = await noteOf('Big beside unread streams');
  const busNotePaths: string[] = [];
  for (const _ of BUS_SEED.addresses) busNotePaths.push(await noteOf('Big on the bus'));
  const logoutHeaders = { authorization: `Bearer ${await register('logout')}` };
  const publisherHeaders = { authorization: `Bearer ${await register('publisher')}` };

  // The bystander's device: it logged in before, and its logins give back the token it was
  // answered (identity's device tokens), the way a client that has logged in here before does.
  const firstLogin = await fetch(`${gw}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: bystanderEmail, password }),
  });
  if (!firstLogin.ok) throw new Error(`bystander login: ${firstLogin.status} ${await firstLogin.text()}`);
  const deviceToken = firstLogin.headers.get('x-device-token');
  return {
    password,
    bystanderEmail,
    bystanderAuth,
    deviceToken,
    flipHeaders,
    flipPath,
    streamerHeaders,
    bigNotePath,
    busNotePaths,
    logoutHeaders,
    publisherHeaders,
  };
}
