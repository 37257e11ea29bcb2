/** One request to the API as the traffic sends it, and its answer: status, JSON or not, body, and why it failed. */
import { randomUUID } from 'node:crypto';

export interface Answer {
  status: number;
  json: boolean;
  body: unknown;
  /**
   * The id the request was sent with (`x-request-id`, which the gateway keeps and passes on): what
   * names it in every part's log, also when no answer came.
   */
  requestId: string;
  error?: string;
  detail?: string;
}

/** Sends `path` to the gateway at `baseUrl`, giving up after `timeoutMs`; never throws. */
export async function callApi(
  baseUrl: string,
  timeoutMs: number,
  path: string,
  { method = 'GET', token, body }: { method?: string; token?: string; body?: unknown } = {},
): Promise<Answer> {
  const requestId = `traffic-${randomUUID()}`;
  const headers: Record<string, string> = { 'x-request-id': requestId };
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  try {
    const res = await fetch(`${baseUrl}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const json = (res.headers.get('content-type') ?? '').startsWith('application/json');
    const text = await res.text();
    const answer: Answer = {
      status: res.status,
      json,
      body: json && text ? (JSON.parse(text) as unknown) : text,
      requestId,
    };
    // A failure says what the system said.
    if (res.status >= 500) {
      const said = (answer.body as { error?: unknown } | undefined)?.error;
      answer.error = typeof said === 'string' ? said : 'no error message';
    }
    return answer;
  } catch (err) {
    const name = (err as Error).name;
    return {
      status: 0,
      json: false,
      body: undefined,
      requestId,
      error: name === 'TimeoutError' ? 'timeout' : 'connection failed',
      detail: errorChain(err),
    };
  }
}

/** `name: message` of an error and of each cause under it (undici's fetch hides the socket's error there). */
function errorChain(err: unknown): string {
  const parts: string[] = [];
  for (let e = err, depth = 0; e instanceof Error && depth < 4; depth++) {
    const code = (e as { code?: unknown }).code;
    parts.push(`${e.name}${typeof code === 'string' ? ` ${code}` : ''}: ${e.message}`);
    e = e.cause;
  }
  return parts.join(' ← ');
}
