/**
 * One client's stream of Server-Sent Events, on the response of its request: the `id:`, `event:`
 * and `data:` lines of each event, a comment line every `keepaliveMs` so that no idle timeout on
 * the way (the gateway, a balancer) closes a quiet stream, and the end.
 *
 * Writes are not awaited: a client that reads slower than events come is the kernel's buffer and
 * then Node's; past `maxBufferedBytes` waiting to be sent, the stream is ended instead of growing
 * without bound (the client reconnects with its Last-Event-ID and loses nothing).
 */
import type { ServerResponse } from 'node:http';

export interface EventStreamOptions {
  keepaliveMs: number;
  maxBufferedBytes: number;
}

export class EventStream {
  private readonly keepalive: NodeJS.Timeout;
  private ended = false;
  private readonly closers: (() => void)[] = [];

  constructor(
    private readonly res: ServerResponse,
    private readonly options: EventStreamOptions,
  ) {
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      // Proxies that buffer (nginx) pass this stream on as it is written.
      'x-accel-buffering': 'no',
      // A stream's connection is not reused once it ends: it closes with it, so that a drain
      // (SIGTERM) that ends the streams is over at once, not after the keep-alive timeout.
      connection: 'close',
    });
    // A first line at once: a proxy on the way (the gateway's among them) sends the status and
    // headers with the first byte of the body, and the client is waiting for them.
    res.write(': open\n\n');
    keepCompact(res);
    this.keepalive = setInterval(() => this.write(': keepalive\n\n'), options.keepaliveMs);
    // Emitted once per response; `on` spares the wrapper `once` makes.
    res.on('close', () => this.end());
  }

  get open(): boolean {
    return !this.ended;
  }

  /** One event; `data` as JSON, on one line (JSON.stringify never writes a newline). */
  send(id: string, event: string, data: unknown): void {
    this.write(`id: ${id}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  }

  /** Called once the stream ends, whoever ends it. */
  onEnd(run: () => void): void {
    if (this.ended) run();
    else this.closers.push(run);
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    clearInterval(this.keepalive);
    this.res.end();
    for (const run of this.closers.splice(0)) run();
  }

  private write(text: string): void {
    if (this.ended) return;
    if (this.res.writableLength > this.options.maxBufferedBytes) {
      this.end();
      return;
    }
    this.res.write(text);
  }
}

/**
 * Node keeps the header block a response sent for as long as the response lasts (`_header`), as
 * it concatenated it, header by header: some 80 string pieces. A stream lasts for hours: the same
 * text made anew in one piece takes a third of the memory (2 kB less a stream). Headers are
 * Latin-1, so the copy is exact.
 */
function keepCompact(res: ServerResponse): void {
  const sent: unknown = Reflect.get(res, '_header');
  if (typeof sent === 'string') Reflect.set(res, '_header', Buffer.from(sent, 'latin1').toString('latin1'));
}
