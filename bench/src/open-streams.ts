/** Streams held open through a server, each from a loopback address of its own block: scenario 13's load. */
import { request } from 'node:http';

/** Streams opened from each loopback address (127.0.1.x), well under what one address can hold. */
const PER_ADDRESS = 200;

export interface Stream {
  /** Resolves once the stream's first line came: it is open and joined. */
  open: Promise<void>;
  close(): void;
}

/** One stream through `gateway`, from `localAddress`; `onData` sees every chunk. */
export function openStream(gateway: URL, path: string, localAddress: string, onData?: (text: string) => void): Stream {
  let close = () => {};
  const open = new Promise<void>((resolve, reject) => {
    const req = request({ host: gateway.hostname, port: gateway.port, path, localAddress, agent: false }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`stream: ${res.statusCode}`));
      res.setEncoding('utf8');
      res.once('data', () => resolve());
      if (onData) res.on('data', onData);
      else res.resume();
    });
    req.on('error', reject);
    req.end();
    close = () => req.destroy();
  });
  return { open, close: () => close() };
}

/** `count` streams, PER_ADDRESS from each loopback address, 200 opening at a time. */
export async function openMany(
  gateway: URL,
  path: string,
  count: number,
  onData?: (index: number, text: string) => void,
): Promise<Stream[]> {
  const streams: Stream[] = [];
  for (let from = 0; from < count; from += 200) {
    const batch = Array.from({ length: Math.min(200, count - from) }, (_, k) => {
      const i = from + k;
      const address = `127.0.1.${1 + Math.floor(i / PER_ADDRESS)}`;
      return openStream(gateway, path, address, onData && ((text) => onData(i, text)));
    });
    await Promise.all(batch.map((s) => s.open));
    streams.push(...batch);
  }
  return streams;
}
