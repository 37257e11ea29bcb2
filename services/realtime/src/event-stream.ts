/**
 * One client's stream of Server-Sent Events, on the response of its request: the `id:`, `event:`
 * and `data:` lines of each event, a comment line now and then (keepalives.ts) so that no idle
 * timeout on the way (the gateway, a balancer) closes a quiet stream, and the end.
 *
 * What a stream may hold is bounded. Writes are not awaited: a client that reads slower than
 * events come is the kernel's buffer and then Node's. An event is written as one frame that every
 * stream shares (`frameOf`, made once by the hub), so a thousand unread streams hold one copy of
 * it, not a thousand. Past `maxBufferedBytes` waiting to be sent, the stream is cut: its socket
 * destroyed, which frees what it held at once (`end()` would keep it until the client read it).
 * The client reconnects with its Last-Event-ID and loses nothing. Together the streams of a
 * process are bounded too (stream-budget.ts), which reads `buffered` and `taken` here.
 */
import type { ServerResponse } from 'node:http';
import type { Keepalives, KeptAlive } from './keepalives';

export interface EventStreamOptions {
  /** What sends every stream its keepalive comment. */
  keepalives: Keepalives;
  maxBufferedBytes: number;
}

/**
 * How long an ended stream's last bytes may take to reach its client: past it the socket is
 * destroyed. A client that reads has them at once; one that does not would keep them alive.
 */
const END_GRACE_MS = 5_000;

const KEEPALIVE = Buffer.from(': keepalive\n\n');

/** An event's frame, as every stream that gets it writes it; `data` as JSON, on one line. */
export function frameOf(id: string, event: string, data: unknown): Buffer {
  return Buffer.from(`id: ${id}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

export class EventStream implements KeptAlive {
  private ended = false;
  /**
   * What runs when the stream ends: two to four callbacks, for hours. Each is added by a copy one
   * longer (`concat`), where a push or a spread would make room for seventeen.
   */
  private closers: (() => void)[] = [];
  /** Bytes of frames handed to the response. */
  private written = 0;

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
    options.keepalives.add(this);
    // Emitted once per response; `on` spares the wrapper `once` makes.
    res.on('close', () => this.finish());
  }

  get open(): boolean {
    return !this.ended;
  }

  /** Bytes written and not yet taken by the socket (Node's buffer, not the kernel's). */
  get buffered(): number {
    return this.ended ? 0 : this.res.writableLength;
  }

  /**
   * Bytes the socket has taken so far, give or take the chunks' framing: it grows while the
   * client reads, and stands still while its socket takes nothing.
   */
  get taken(): number {
    return this.written - this.buffered;
  }

  /** A comment line, which clients ignore: it keeps idle timeouts on the way from closing the stream. */
  keepalive(): void {
    this.write(KEEPALIVE);
  }

  /** One event of this stream's own (not shared with others). */
  send(id: string, event: string, data: unknown): void {
    this.write(frameOf(id, event, data));
  }

  /** A frame made by `frameOf`, possibly written to other streams too. */
  sendFrame(frame: Buffer): void {
    this.write(frame);
  }

  /** Resolves once what the stream holds is below its high-water mark again, or it has ended. */
  drained(): Promise<void> {
    if (this.ended || !this.res.writableNeedDrain) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        this.res.off('drain', done);
        // Not kept till the stream ends: a long resume waits once a page.
        this.closers = this.closers.filter((run) => run !== done);
        resolve();
      };
      this.res.on('drain', done);
      this.onEnd(done);
    });
  }

  /** Called once the stream ends, whoever ends it. */
  onEnd(run: () => void): void {
    if (this.ended) run();
    else this.closers = this.closers.concat(run);
  }

  /** Ends the stream: what it holds still goes to the client, if it takes it within END_GRACE_MS. */
  end(): void {
    if (this.ended) return;
    const { res } = this;
    res.end();
    this.finish();
    const late = setTimeout(() => res.destroy(), END_GRACE_MS);
    late.unref();
    res.on('close', () => clearTimeout(late));
  }

  /** Cuts the stream off: its socket is destroyed, and what it held with it. */
  cut(): void {
    if (this.ended) return;
    this.res.destroy();
    this.finish();
  }

  private finish(): void {
    if (this.ended) return;
    this.ended = true;
    this.options.keepalives.delete(this);
    const closers = this.closers;
    this.closers = [];
    for (const run of closers) run();
  }

  private write(frame: Buffer): void {
    if (this.ended) return;
    if (this.res.writableLength + frame.length > this.options.maxBufferedBytes) {
      this.cut();
      return;
    }
    this.written += frame.length;
    this.res.write(frame);
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
