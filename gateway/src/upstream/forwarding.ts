import type { IncomingMessage, ServerResponse } from 'node:http';

/** What the caller knows of a request before it is forwarded. */
export interface Forwarding {
  /** The body, read whole before the first attempt (request-body.ts) and sent with each. */
  body: Buffer | undefined;
  /**
   * Whether the answer belongs to one person (the request carried a token, or answers with one):
   * it gets `Cache-Control: no-store`, whatever the service said, so no browser or shared cache
   * keeps it. Anonymous public reads keep the service's ETag and caching.
   */
  private: boolean;
}

export type UpstreamProxy = (req: IncomingMessage, res: ServerResponse, forwarding: Forwarding) => void;
