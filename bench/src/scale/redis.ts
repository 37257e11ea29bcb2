/** Redis, read directly, and the limiter's own count: the check that every request was counted. */
import { connect } from 'node:net';

/** One command to Redis over RESP, its reply as text (enough for KEYS and GET). */
export function redisCommand(port: number, ...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let reply = '';
    socket.setTimeout(2000, () => socket.destroy(new Error('Redis did not answer')));
    socket.on('data', (chunk) => {
      reply += chunk.toString();
      // Every reply we ask for ends in CRLF once complete; a short wait covers multi-part arrays.
      setTimeout(() => socket.end(), 50);
    });
    socket.once('end', () => resolve(reply));
    socket.once('error', reject);
    socket.write(`*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`);
  });
}

/** How many auth-route requests the limiter has counted, from its `RateLimit` header (draft-7). */
export async function countedByHeader(url: string): Promise<number> {
  const res = await fetch(`${url}/api/auth/login`, { method: 'POST' });
  await res.arrayBuffer();
  const header = res.headers.get('ratelimit') ?? '';
  const limit = Number(/limit=(\d+)/.exec(header)?.[1]);
  const remaining = Number(/remaining=(\d+)/.exec(header)?.[1]);
  if (res.status !== 400 || !Number.isFinite(limit - remaining))
    throw new Error(`login with an empty body: ${res.status}, RateLimit "${header}": the limiter is not on this path`);
  return limit - remaining;
}
