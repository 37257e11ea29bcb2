/**
 * The budget under memory pressure, on real streams over real sockets: the heap's reading is the
 * one thing told (a heap near its limit cannot be made on purpose without risking the test run).
 */
import { createServer, get, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, describe, expect, it } from '@jest/globals';
import { EventStream } from '../src/event-stream';
import { createKeepalives } from '../src/keepalives';
import { type CutReason, createStreamBudget, type StreamBudget } from '../src/stream-budget';

let server: Server | undefined;
let budget: StreamBudget | undefined;
const keepalives = createKeepalives(60_000);
afterAll(() => keepalives.stop());
afterEach(async () => {
  budget?.stop();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
});

/** `count` streams, each opened by a client that reads; in the order they opened. */
async function openStreams(count: number, watch: (stream: EventStream) => void): Promise<EventStream[]> {
  const streams: EventStream[] = [];
  server = createServer((_req, res) => {
    const stream = new EventStream(res, { keepalives, maxBufferedBytes: 1_048_576 });
    streams.push(stream);
    watch(stream);
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  for (let i = 0; i < count; i++) {
    get(`http://127.0.0.1:${port}/`, (res) => res.resume()).on('error', () => undefined);
    while (streams.length <= i) await sleep(5);
  }
  return streams;
}

describe('the streams’ budget under memory pressure', () => {
  it('when the heap is past its mark, then a tenth of the streams are shed at each sweep, the newest first; below it, none', async () => {
    let heap = 50;
    const cuts: CutReason[] = [];
    budget = createStreamBudget({
      maxBytes: 1_048_576,
      stallMs: 30_000,
      shedAtHeapPercent: 80,
      heapUsedPercent: () => heap,
      onCut: (reason) => cuts.push(reason),
    });
    const streams = await openStreams(10, (stream) => budget?.watch(stream));
    const open = () => streams.map((s) => s.open);

    budget.sweep();
    expect(open()).toEqual(Array(10).fill(true));

    heap = 85;
    budget.sweep();
    budget.sweep();
    expect(open()).toEqual([...Array(8).fill(true), false, false]);
    expect(cuts).toEqual(['memory-pressure', 'memory-pressure']);

    heap = 60;
    budget.sweep();
    expect(budget.size).toBe(8);
  });
});
