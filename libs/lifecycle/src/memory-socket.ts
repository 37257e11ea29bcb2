/**
 * A connection in memory: two ends of a socket, what one writes the other reads, as over TCP. It
 * carries the calls between services hosted in the same process (hosted-services.ts), so that a
 * call and its answer go through the same HTTP client and server code as over the network.
 *
 * Writes are paced by the reader, as a socket's are by the kernel's buffers: a write is done only
 * once the other end has asked for more, so a reader that stops reading stops the writer, instead
 * of filling this process's memory.
 *
 * Node's HTTP client and server call a few methods of `net.Socket` on what they are given; they
 * are here, with the meaning they have in memory: an idle timeout, and no-ops for what only a
 * kernel socket has (keep-alive probes, Nagle, ref).
 */
import { Duplex } from 'node:stream';

export class MemorySocket extends Duplex {
  readonly remoteAddress = '127.0.0.1';
  readonly remoteFamily = 'IPv4';
  readonly localAddress = '127.0.0.1';
  readonly connecting = false;
  private peer: MemorySocket | undefined;
  /** The callback of this end's last write, held until the other end reads it. */
  private unread: ((error?: Error) => void) | undefined;
  /** Whether this end was told that the other will send nothing more. */
  private eof = false;
  private idleMs = 0;
  private idleTimer: NodeJS.Timeout | undefined;

  private constructor() {
    // As a TCP socket's: once the other end has finished sending, this one finishes too.
    super({ allowHalfOpen: false });
  }

  /** Two ends of one connection. */
  static pair(): [MemorySocket, MemorySocket] {
    const one = new MemorySocket();
    const other = new MemorySocket();
    one.peer = other;
    other.peer = one;
    return [one, other];
  }

  override _read(): void {
    const peer = this.peer;
    const done = peer?.unread;
    if (!peer || !done) return;
    peer.unread = undefined;
    done();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    const peer = this.peer;
    if (!peer) {
      callback(reset());
      return;
    }
    this.active();
    peer.active();
    if (peer.push(chunk)) callback();
    else this.unread = callback;
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.peer?.receiveEof();
    callback();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.stopIdleTimer();
    this.unread = undefined;
    const peer = this.peer;
    this.peer = undefined;
    // As over TCP when one end closes: the other's reads end, and its writes fail from now on.
    if (peer) {
      peer.peer = undefined;
      const held = peer.unread;
      peer.unread = undefined;
      held?.(reset());
      peer.receiveEof();
    }
    callback(error);
  }

  private receiveEof(): void {
    if (this.eof || this.destroyed) return;
    this.eof = true;
    this.push(null);
  }

  /** `net.Socket#setTimeout`: 'timeout' once nothing was read or written for `ms` (0: never). */
  setTimeout(ms: number, onTimeout?: () => void): this {
    this.idleMs = ms;
    if (onTimeout) this.once('timeout', onTimeout);
    this.active();
    return this;
  }

  setKeepAlive(): this {
    return this;
  }

  setNoDelay(): this {
    return this;
  }

  ref(): this {
    return this;
  }

  unref(): this {
    return this;
  }

  private active(): void {
    this.stopIdleTimer();
    if (this.idleMs <= 0 || this.destroyed) return;
    this.idleTimer = setTimeout(() => this.emit('timeout'), this.idleMs);
    this.idleTimer.unref();
  }

  private stopIdleTimer(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
  }
}

/** What writing to a connection whose other end is gone fails with, as over TCP. */
function reset(): NodeJS.ErrnoException {
  return Object.assign(new Error('The connection was closed by the other end'), { code: 'ECONNRESET' });
}
