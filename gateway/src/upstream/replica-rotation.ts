/**
 * Resolves an upstream's name to every address it has, each new connection starting at the next
 * one in turn. A service scaled to several replicas has one name and an address per replica
 * (Compose's DNS, a Kubernetes headless service); the system resolver sorts them the same way
 * every time, so with its first answer every connection would go to one replica. Node connects
 * to the addresses in the order given and moves on to the next when one refuses
 * (`autoSelectFamily`, on by default), so a replica being replaced costs no request either.
 */
import { type LookupAddress, lookup } from 'node:dns';
import type { LookupFunction } from 'node:net';

/** How many connections each upstream name has been given: whose turn the next one is. */
const turns = new Map<string, number>();

export const nextReplicaFirst: LookupFunction = (hostname, options, callback) => {
  lookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
    if (err) return callback(err, []);
    const sorted = [...addresses].sort((a, b) => (a.address < b.address ? -1 : a.address > b.address ? 1 : 0));
    const turn = turns.get(hostname) ?? 0;
    turns.set(hostname, turn + 1);
    const from = sorted.length > 0 ? turn % sorted.length : 0;
    const ordered = [...sorted.slice(from), ...sorted.slice(0, from)];
    if (options.all) return callback(null, ordered);
    const [first] = ordered;
    if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), []);
    callback(null, first.address, first.family);
  });
};
