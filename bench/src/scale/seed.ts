/** The scale run's data: a user and its token (bcrypt once, at the contract's cost), 30 published posts. */

/** Seeds through the system at `url`; answers the user's headers, for the authenticated write. */
export async function seedScaleData(url: string): Promise<Record<string, string>> {
  const register = await fetch(`${url}/api/auth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: `scale-${process.pid}@example.com`, password: 'bench-password' }),
  });
  if (register.status !== 201) throw new Error(`register: ${register.status}`);
  const { token } = (await register.json()) as { token: string };
  const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  for (let i = 0; i < 30; i++) {
    const created = await fetch(`${url}/api/posts`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ title: `Scale post ${i}`, body: 'A body of a realistic length for a post. '.repeat(4) }),
    });
    const { _id } = (await created.json()) as { _id: string };
    const published = await fetch(`${url}/api/posts/${_id}`, {
      method: 'PUT',
      headers: auth,
      body: JSON.stringify({ status: 'published' }),
    });
    if (!published.ok) throw new Error(`publish: ${published.status}`);
  }
  return auth;
}
