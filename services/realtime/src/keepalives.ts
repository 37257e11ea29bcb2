/**
 * One timer for the keepalives of every stream of a process: each `everyMs`, each open stream
 * gets its comment line. A stream lasts for hours, and its own interval would be a timer and a
 * closure kept for each of thousands of idle streams; a place in one set costs a fraction of that.
 * A stream's first keepalive comes within `everyMs` of its start rather than exactly then, which
 * is all an idle timeout on the way needs.
 */
export interface KeptAlive {
  /** Sends the stream's keepalive comment. */
  keepalive(): void;
}

export interface Keepalives {
  add(stream: KeptAlive): void;
  delete(stream: KeptAlive): void;
  stop(): void;
}

export function createKeepalives(everyMs: number): Keepalives {
  const streams = new Set<KeptAlive>();
  const timer = setInterval(() => {
    for (const stream of streams) stream.keepalive();
  }, everyMs);
  // The streams' sockets keep the process alive while there are any; this timer need not.
  timer.unref();
  return {
    add: (stream) => void streams.add(stream),
    delete: (stream) => void streams.delete(stream),
    stop: () => clearInterval(timer),
  };
}
