/**
 * An account with something of everything, made through the gateway as a client makes it: a
 * draft and a published post, two notes (one with a file attached, put straight to storage), and
 * a multipart upload left half done. For tests of what deleting an account must remove.
 */
import { randomBytes } from 'node:crypto';

export interface PopulatedAccount {
  email: string;
  password: string;
  token: string;
  userId: string;
  postIds: string[];
  noteIds: string[];
  /** Keys of the objects in storage: the attached file, and the multipart upload's. */
  keys: string[];
  uploadIds: string[];
}

export async function populateAccount(gatewayUrl: string, tag = 'account'): Promise<PopulatedAccount> {
  const email = `${tag}-${randomBytes(6).toString('hex')}@example.com`;
  const password = 'correct horse battery';
  const call = async (method: string, path: string, body?: unknown, token?: string) => {
    const res = await fetch(`${gatewayUrl}${path}`, {
      method,
      headers: {
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${text}`);
    return (text ? JSON.parse(text) : {}) as Record<string, unknown>;
  };

  const { token } = (await call('POST', '/api/auth/register', { email, password })) as { token: string };
  const userId = (JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()) as { id: string }).id;
  const as = (method: string, path: string, body?: unknown) => call(method, path, body, token);

  const draft = await as('POST', '/api/posts', {
    title: `${tag} draft`,
    body: 'a draft that stays a draft',
    tags: [tag],
  });
  const published = await as('POST', '/api/posts', { title: `${tag} post`, body: 'a post for everyone', tags: [tag] });
  await as('PUT', `/api/posts/${published._id}`, { status: 'published' });

  const bytes = Buffer.from(`attachment of ${email}\n`);
  const link = (await as('POST', '/api/upload-url', {
    contentType: 'text/plain',
    filename: 'notes.txt',
    size: bytes.length,
  })) as { url: string; key: string; headers: Record<string, string> };
  const put = await fetch(link.url, { method: 'PUT', headers: link.headers, body: bytes });
  if (!put.ok) throw new Error(`storage answered ${put.status} to the attachment's PUT`);
  const attached = await as('POST', '/api/notes', { title: `${tag} note`, attachmentKey: link.key });
  const plain = await as('POST', '/api/notes', { title: `${tag} plain note`, body: 'no file' });

  const multipart = (await as('POST', '/api/multipart-uploads', {
    contentType: 'application/zip',
    filename: 'big.zip',
    size: 1024 * 1024,
  })) as { uploadId: string; key: string };
  const parts = (await as('POST', `/api/multipart-uploads/${multipart.uploadId}/part-urls`, { partNumbers: [1] })) as {
    parts: { url: string; headers: Record<string, string> }[];
  };
  const part = parts.parts[0];
  if (!part) throw new Error('no part link');
  const sent = await fetch(part.url, {
    method: 'PUT',
    headers: part.headers,
    body: Buffer.alloc(Number(part.headers['Content-Length']), 7),
  });
  if (!sent.ok) throw new Error(`storage answered ${sent.status} to a part`);

  return {
    email,
    password,
    token,
    userId,
    postIds: [String(draft._id), String(published._id)],
    noteIds: [String(attached._id), String(plain._id)],
    keys: [link.key, multipart.key],
    uploadIds: [multipart.uploadId],
  };
}
