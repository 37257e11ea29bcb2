import { setTimeout as sleep } from 'node:timers/promises';
import { newUserId, tokenFor } from '@cs/testkit';
import { describe, expect, it } from '@jest/globals';
import { echoUpstream, everyUpstreamAt, spawnGateway } from './helpers';

describe('gateway shutdown', () => {
  it('when SIGTERM arrives during a request, then the request still completes and the process exits 0', async () => {
    const slow = await echoUpstream({ delayMs: 1000 });
    const gateway = await spawnGateway(everyUpstreamAt(slow.url));
    try {
      const inFlight = fetch(`${gateway.url}/api/posts/my-posts`, {
        headers: { Authorization: `Bearer ${tokenFor(newUserId())}` },
      });
      await sleep(200);
      const exited = gateway.stop();

      const res = await inFlight;
      expect(res.status).toBe(200);
      expect(((await res.json()) as { url: string }).url).toBe('/api/posts/my-posts');
      expect(await exited).toBe(0);
    } finally {
      await slow.close();
    }
  });
});
