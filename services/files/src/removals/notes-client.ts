/**
 * The files service's one call to the notes service: a key whose object the check removed after
 * it was claimed. Made with a short token of the key's owner, as identity tells each service of a
 * deleted account, so notes clears only that owner's note. Idempotent on the notes side.
 */
import { signToken } from '@cs/auth';
import { type Fetch, traced } from '@cs/telemetry';

export interface NotesClient {
  attachmentRemoved(ownerId: string, key: string, reason: string): Promise<void>;
}

export function createNotesClient({
  baseUrl,
  fetch,
  secret,
  timeoutMs,
}: {
  baseUrl: string;
  /** How notes is reached (over the network, or in memory in one process). */
  fetch: Fetch;
  secret: string;
  timeoutMs: number;
}): NotesClient {
  const call = traced(fetch);
  return {
    async attachmentRemoved(ownerId, key, reason) {
      const token = signToken(ownerId, { secret, expiresIn: '5m' });
      const res = await call(`${baseUrl}/internal/attachments/removed`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ key, reason }),
        signal: AbortSignal.timeout(timeoutMs),
      });
      await res.arrayBuffer();
      if (res.status !== 204) throw new Error(`notes answered ${res.status}`);
    },
  };
}
