/**
 * A stream of Server-Sent Events as a fetch-based client reads it: its events as they come, its
 * comment lines, and its end. Reads the wire format itself, so that tests see what is sent.
 */
import { setTimeout as sleep } from 'node:timers/promises';

export interface ReceivedEvent {
  id?: string;
  event?: string;
  data?: unknown;
}

/** A stream as a client reads it: its events as they come, its comment lines, and its end. */
export class StreamReader {
  readonly events: ReceivedEvent[] = [];
  comments = 0;
  /** Comment lines that are the server's keepalives (`: keepalive`). */
  keepalives = 0;
  ended = false;
  private buffered = '';

  private constructor(
    readonly response: Response,
    private readonly controller: AbortController,
  ) {}

  static async open(url: string, headers: Record<string, string> = {}): Promise<StreamReader> {
    const controller = new AbortController();
    const reader = new StreamReader(await fetch(url, { headers, signal: controller.signal }), controller);
    if (reader.response.ok) void reader.read();
    return reader;
  }

  /** Waits until `count` events came (or the stream ended), at most `timeoutMs`. */
  async waitFor(count: number, timeoutMs = 5_000): Promise<ReceivedEvent[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.events.length < count && !this.ended && Date.now() < deadline) {
      await sleep(10);
    }
    return this.events;
  }

  async waitForEnd(timeoutMs = 5_000): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (!this.ended && Date.now() < deadline) await sleep(10);
    return this.ended;
  }

  close(): void {
    this.controller.abort();
  }

  private async read(): Promise<void> {
    const body = this.response.body;
    if (!body) return;
    const decoder = new TextDecoder();
    try {
      for await (const chunk of body) {
        this.buffered += decoder.decode(chunk as Uint8Array, { stream: true });
        let end = this.buffered.indexOf('\n\n');
        while (end !== -1) {
          this.take(this.buffered.slice(0, end));
          this.buffered = this.buffered.slice(end + 2);
          end = this.buffered.indexOf('\n\n');
        }
      }
    } catch {
      // Aborted by close().
    }
    this.ended = true;
  }

  private take(block: string): void {
    const event: ReceivedEvent = {};
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) {
        this.comments += 1;
        if (line === ': keepalive') this.keepalives += 1;
        continue;
      }
      const colon = line.indexOf(':');
      const [field, value] = [line.slice(0, colon), line.slice(colon + 1).trimStart()];
      if (field === 'id') event.id = value;
      else if (field === 'event') event.event = value;
      else if (field === 'data') event.data = JSON.parse(value);
    }
    if (event.event !== undefined) this.events.push(event);
  }
}
