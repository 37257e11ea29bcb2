/**
 * Connections per client address in the scaled topology: two gateways behind HAProxy, where every
 * connection a gateway sees is the balancer's, so the cap is the balancer's (a stick table
 * counting each address's open connections). An address that holds its 256 gets its next
 * connection closed at the balancer while another address is served, and is served again once
 * its connections close. Clients are told apart by binding their sockets to other loopback
 * addresses (127.0.0.2, 127.0.0.3: all of 127.0.0.0/8 is loopback on Linux).
 */
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import type { RunningSystem } from '@cs/devstack';
import { eventually, startTestSystem } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

const CAP = 256; // the default, the gateway's CONNECTIONS_PER_ADDRESS
const HOLDER = '127.0.0.2';
const BYSTANDER = '127.0.0.3';

let system: RunningSystem;
let port: number;

beforeAll(async () => {
  system = await startTestSystem({ gateways: 2 });
  port = Number(new URL(system.gatewayUrl).port);
}, 120_000);
afterAll(async () => {
  await system?.stop();
});

/** A connection from `localAddress`, once it is established. */
function open(localAddress: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, localAddress }, () => resolve(socket));
    socket.once('error', reject);
  });
}

/** A GET /healthz on a connection of its own: its status, or what became of the connection. */
function healthz(localAddress: string): Promise<{ status?: number; closed?: string }> {
  return new Promise((resolve) => {
    const req = request(`${system.gatewayUrl}/healthz`, { agent: false, localAddress }, (res) => {
      res.resume();
      res.once('end', () => resolve({ status: res.statusCode }));
    });
    req.once('error', (err: NodeJS.ErrnoException) => resolve({ closed: err.code ?? err.message }));
    req.end();
  });
}

/** The connections HAProxy holds open on the gateways' frontend, from its statistics. */
async function frontendConnections(): Promise<number> {
  const csv = await (await fetch(`${system.balancer?.statsUrl};csv`)).text();
  const [header = '', ...rows] = csv.trim().split('\n');
  const columns = header.replace(/^# /, '').split(',');
  const row = rows.map((r) => r.split(',')).find((c) => c[0] === 'gateway' && c[1] === 'FRONTEND');
  return Number(row?.[columns.indexOf('scur')] ?? 0);
}

describe('connections per client address, behind the balancer', () => {
  it('when one address holds its cap of connections, then the balancer closes its next one unanswered while another address is served', async () => {
    const held = await Promise.all(Array.from({ length: CAP }, () => open(HOLDER)));
    try {
      // Established is not yet taken: the kernel completes a connection before HAProxy accepts
      // it, and its threads take them in batches, in no set order.
      await eventually('the balancer holding them all', frontendConnections, (held) => held >= CAP);
      const refused = await healthz(HOLDER);
      const bystander = await healthz(BYSTANDER);

      expect(refused.status).toBeUndefined();
      expect(refused.closed).toMatch(/ECONNRESET|socket hang up|EPIPE/);
      expect(bystander).toEqual({ status: 200 });
    } finally {
      for (const socket of held) socket.destroy();
    }
    // Each connection that closed gave its place back.
    await eventually(
      'the holder served again',
      () => healthz(HOLDER),
      (answer) => answer.status === 200,
    );
  });
});
