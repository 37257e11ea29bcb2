/**
 * How long the database may keep a request waiting. See index.ts for how the driver applies them.
 */

/** How often the driver checks that the server answers (its heartbeat, a `hello`). */
export const HEARTBEAT_MS = 500;
/** How long one check, or opening a connection, may take before the server counts as unreachable. */
export const CHECK_TIMEOUT_MS = 1000;
/**
 * A server that stops answering (paused, cut off) is found out by the heartbeat within this, and
 * every operation waiting on it fails then.
 */
export const UNRESPONSIVE_BOUND_MS = HEARTBEAT_MS + CHECK_TIMEOUT_MS;
/** The longest one operation may take on a server that still answers: busy, but working. */
export const OPERATION_BOUND_MS = 5000;
