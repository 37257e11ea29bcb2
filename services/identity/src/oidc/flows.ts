/**
 * Sign-ins under way, keyed by `state`: from `start` to the provider's callback. What the flow
 * needs at the callback stays here and never travels: our PKCE verifier for the provider, the
 * nonce the ID token must carry, the client's challenge, and where to send the browser at the end.
 *
 * A flow lives FLOW_TTL_MS and is taken once: its state is inserted into `oidc_flow_uses`, whose
 * `_id` is unique, so of a callback and its replay exactly one goes on (FerretDB's conditional
 * writes are not atomic; its unique indexes are enforced). The navigations that open flows are
 * not counted by the gateway's auth limit; the number of open flows is bounded instead, per client
 * address and in all, so no one can fill the collection: past either bound, 429.
 */

import { oidcMessages } from '@cs/contract';
import { HttpError } from '@cs/errors';
import { claimedByInsert, trusted } from '@cs/mongo';
import type { Model } from 'mongoose';
import { randomNonce, randomPKCECodeVerifier, randomState } from 'openid-client';
import type { FlowRecord, UseRecord } from './model';

export const FLOW_TTL_MS = 10 * 60_000;
/** Flows one client address may have open at once: a person retrying in a few tabs, an office behind one address. */
export const OPEN_FLOWS_PER_CLIENT = 20;
/** Flows open at once from everyone. */
export const OPEN_FLOWS_TOTAL = 10_000;

export interface FlowStart {
  provider: string;
  challenge: string;
  redirect: string;
  client: string;
}

export interface Flows {
  /** A new flow; 429 past a bound. */
  open(start: FlowStart): Promise<FlowRecord>;
  /** The flow of `state` at `provider`'s callback, taken once; 400 when unknown, expired or taken already. */
  take(state: string, provider: string): Promise<FlowRecord>;
  /** Deletes expired flows and the uses of states that can no longer come back. */
  prune(): Promise<number>;
}

export function createFlows({
  flows,
  uses,
  now = Date.now,
}: {
  flows: Model<FlowRecord>;
  uses: Model<UseRecord>;
  now?: () => number;
}): Flows {
  const tooMany = () =>
    new HttpError(429, oidcMessages.tooManyFlows, { headers: { 'retry-after': String(FLOW_TTL_MS / 1000) } });
  const unknown = () => new HttpError(400, oidcMessages.unknownState);

  return {
    async open({ provider, challenge, redirect, client }) {
      const at = now();
      const [mine, all] = await Promise.all([
        flows.countDocuments({ client, expiresAt: trusted({ $gt: new Date(at) }) }),
        flows.estimatedDocumentCount(),
      ]);
      if (mine >= OPEN_FLOWS_PER_CLIENT || all >= OPEN_FLOWS_TOTAL) throw tooMany();
      const flow: FlowRecord = {
        _id: randomState(),
        provider,
        verifier: randomPKCECodeVerifier(),
        nonce: randomNonce(),
        challenge,
        redirect,
        client,
        expiresAt: new Date(at + FLOW_TTL_MS),
      };
      await flows.create(flow);
      return flow;
    },

    async take(state, provider) {
      const flow = await flows.findById(state).lean();
      if (!flow || flow.provider !== provider || flow.expiresAt.getTime() <= now()) throw unknown();
      if (!(await claimedByInsert(() => uses.create({ _id: state, at: new Date(now()) })))) throw unknown();
      await flows.deleteOne({ _id: state });
      return flow;
    },

    async prune() {
      const at = now();
      const [expired, used] = await Promise.all([
        flows.deleteMany({ expiresAt: trusted({ $lte: new Date(at) }) }),
        uses.deleteMany({ at: trusted({ $lte: new Date(at - FLOW_TTL_MS) }) }),
      ]);
      return expired.deletedCount + used.deletedCount;
    },
  };
}
