/**
 * Streams that are never read, in a process of its own (as paced-load.ts): the attack that took
 * the one process down (issue 46, C1). Each group opens `perAddress` streams from each of its
 * loopback addresses on raw sockets: it writes the request, reads the answer's headers, and then
 * pauses the socket for good, so whatever the server sends next stays in the kernel's buffers and
 * then in the server's. A refused stream (429 past the per-account cap, 503, anything but 200) is
 * counted and closed. Once all are open, the account updates one of its notes `count` times with a
 * body of `bodyBytes`, one after another, each an event for every stream it holds; then the
 * streams are held until `holdS` from the start, and the summary is printed as JSON on stdout.
 *
 *   node unread-streams.js '{"gateway":…,"groups":[…],"update":{…},"holdS":29}'
 */
import http from 'node:http';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { median, round } from './stats';

export interface StreamGroup {
  name: string;
  path: string;
  headers: Record<string, string>;
  addresses: string[];
  perAddress: number;
}

export interface UnreadStreamsSpec {
  gateway: string;
  groups: StreamGroup[];
  /** The updates once every stream is open: PUT `path` with a body of `bodyBytes`, `count` times. */
  update: { path: string; headers: Record<string, string>; address: string; bodyBytes: number; count: number };
  holdS: number;
}

export interface UnreadStreamsResult {
  /**
   * Per group: answers to the stream requests by status (`error`: none in time), and how many of
   * those held the server had ended by `holdS` (seen once they are read again, at the end).
   */
  groups: Record<string, { tried: number; statuses: Record<string, number>; endedByServer: number }>;
  updates: { statuses: Record<string, number>; p50: number; max: number };
  /** Seconds from the start until every stream was answered. */
  openedInS: number;
}

/** Stream requests waiting for their headers at once, so that opening thousands is not a SYN flood. */
const OPENING_AT_ONCE = 64;
const HEADERS_TIMEOUT_MS = 15_000;
/** At the end, how long the held streams are read for the server's end of those it ended. */
const DRAIN_MS = 2000;

/** Opens one stream: its status, and the socket when it was 200 (paused, never read again). */
function open(base: URL, group: StreamGroup, localAddress: string): Promise<{ status: string; socket?: net.Socket }> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: base.hostname, port: Number(base.port), localAddress });
    let head = '';
    let done = false;
    const finish = (status: string, keep: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.removeAllListeners('data');
      if (keep) {
        socket.pause();
        resolve({ status, socket });
      } else {
        socket.destroy();
        resolve({ status });
      }
    };
    const timer = setTimeout(() => finish('error', false), HEADERS_TIMEOUT_MS);
    socket.on('error', () => finish('error', false));
    socket.on('connect', () => {
      const lines = [
        `GET ${group.path} HTTP/1.1`,
        `Host: ${base.host}`,
        'Accept: text/event-stream',
        ...Object.entries(group.headers).map(([k, v]) => `${k}: ${v}`),
      ];
      socket.write(`${lines.join('\r\n')}\r\n\r\n`);
    });
    socket.on('data', (chunk: Buffer) => {
      head += chunk.toString('latin1');
      if (!head.includes('\r\n\r\n')) return;
      const status = head.slice(9, 12);
      finish(status, status === '200');
    });
  });
}

function update(base: URL, u: UnreadStreamsSpec['update'], body: string): Promise<string> {
  return new Promise((resolve) => {
    const req = http.request(
      {
        host: base.hostname,
        port: base.port,
        method: 'PUT',
        path: u.path,
        localAddress: u.address,
        agent: false,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...u.headers },
        timeout: 30_000,
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(String(res.statusCode)));
        res.on('error', () => resolve('error'));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve('error'));
    req.end(body);
  });
}

async function main(): Promise<void> {
  const spec = JSON.parse(process.argv[2] ?? '{}') as UnreadStreamsSpec;
  const base = new URL(spec.gateway);
  const started = performance.now();
  const held: { socket: net.Socket; tally: { endedByServer: number } }[] = [];
  const result: UnreadStreamsResult = { groups: {}, updates: { statuses: {}, p50: 0, max: 0 }, openedInS: 0 };

  // Every group's streams, address after address in turn, OPENING_AT_ONCE waiting at a time.
  const jobs = spec.groups.flatMap((group) => {
    const tally = { tried: 0, statuses: {} as Record<string, number>, endedByServer: 0 };
    result.groups[group.name] = tally;
    return Array.from({ length: group.perAddress }, (_, k) =>
      group.addresses.map((address) => ({ group, address, tally, k })),
    ).flat();
  });
  let next = 0;
  await Promise.all(
    Array.from({ length: OPENING_AT_ONCE }, async () => {
      while (next < jobs.length) {
        const job = jobs[next++];
        if (!job) break;
        job.tally.tried += 1;
        const { status, socket } = await open(base, job.group, job.address);
        job.tally.statuses[status] = (job.tally.statuses[status] ?? 0) + 1;
        if (socket) held.push({ socket, tally: job.tally });
      }
    }),
  );
  result.openedInS = round((performance.now() - started) / 1000, 1);

  const body = JSON.stringify({ title: 'A note with a big body', body: 'x'.repeat(spec.update.bodyBytes) });
  const latencies: number[] = [];
  for (let i = 0; i < spec.update.count; i++) {
    const t = performance.now();
    const status = await update(base, spec.update, body);
    latencies.push(performance.now() - t);
    result.updates.statuses[status] = (result.updates.statuses[status] ?? 0) + 1;
  }
  result.updates.p50 = round(median(latencies), 1);
  result.updates.max = round(Math.max(0, ...latencies), 1);

  await sleep(Math.max(0, spec.holdS * 1000 - (performance.now() - started)));
  // A paused socket shows no end: each is read again a while, and those the server had ended
  // (a slow reader cut, a stream stalled too long) end, once what they hold is read.
  for (const { socket, tally } of held) {
    socket.once('end', () => {
      tally.endedByServer += 1;
    });
    socket.resume();
  }
  await sleep(DRAIN_MS);
  for (const { socket } of held) socket.destroy();
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

void main();
