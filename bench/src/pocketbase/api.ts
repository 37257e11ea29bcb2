/** The two systems' APIs, as a client calls them: registering, and the paths of the reads. */
import type { Author, System } from '../seed-load';

export const PASSWORD = 'bench-password';

async function json(url: string, init: RequestInit): Promise<Record<string, unknown>> {
  const res = await fetch(url, init);
  if (!res.ok) throw new Error(`${init.method ?? 'GET'} ${url}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, unknown>;
}

export const JSON_TYPE = { 'content-type': 'application/json' };

/** A user with PASSWORD, as a client registers one: its token and id. */
export async function register(system: System, url: string, email: string): Promise<Author> {
  if (system === 'ours') {
    const { token } = await json(`${url}/api/auth/register`, {
      method: 'POST',
      headers: JSON_TYPE,
      body: JSON.stringify({ email, password: PASSWORD }),
    });
    const payload = JSON.parse(Buffer.from(String(token).split('.')[1] ?? '', 'base64url').toString());
    return { token: String(token), id: String(payload.id) };
  }
  await json(`${url}/api/collections/users/records`, {
    method: 'POST',
    headers: JSON_TYPE,
    body: JSON.stringify({ email, password: PASSWORD, passwordConfirm: PASSWORD }),
  });
  const auth = await json(`${url}/api/collections/users/auth-with-password`, {
    method: 'POST',
    headers: JSON_TYPE,
    body: JSON.stringify({ identity: email, password: PASSWORD }),
  });
  return { token: String(auth.token), id: String((auth.record as { id: string }).id) };
}

/** The first page of the public list of posts tagged "listed", newest first, with its total. */
export const listPath: Record<System, string> = {
  ours: '/api/posts?tag=listed&limit=20',
  // The tags are a JSON list: `~` is SQL LIKE on its text, so the quotes match the whole tag. The
  // id breaks ties, as ours does.
  pocketbase: `/api/collections/posts/records?page=1&perPage=20&sort=-created,-id&filter=${encodeURIComponent(`tags ~ '"listed"'`)}`,
};

export const byIdPath = (system: System, id: string) =>
  system === 'ours' ? `/api/posts/${id}` : `/api/collections/posts/records/${id}`;
