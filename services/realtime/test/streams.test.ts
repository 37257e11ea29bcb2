/**
 * The realtime service through HTTP, with a real Redis as its bus: events are published here as
 * the posts and notes services publish them.
 */
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { LiveEvent } from '@cs/contract';
import { newUserId, StreamReader, TEST_JWT_SECRET, tokenFor } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { RETENTION, type RealtimeHarness, startRealtime } from './helpers';

let h: RealtimeHarness;
const readers: StreamReader[] = [];

beforeAll(async () => {
  h = await startRealtime();
});
afterAll(async () => {
  for (const r of readers) r.close();
  await h?.stop();
});

let published = 0;
/** A post event as posts publishes it: public, so with no owner. */
async function publishPost(kind: 'upsert' | 'remove', tags: string[] = []) {
  const n = ++published;
  const data = kind === 'upsert' ? { _id: `post-${n}`, title: `post ${n}`, tags } : { _id: `post-${n}` };
  return (await h.bus.publish({ topic: 'posts', kind, tags, data }, `test-${n}`)) as string;
}

async function publishNote(owner: string) {
  const n = ++published;
  return (await h.bus.publish(
    { topic: 'notes', kind: 'upsert', owner, data: { _id: `note-${n}`, title: `note ${n}` } },
    `test-${n}`,
  )) as string;
}

async function open(query: string, headers: Record<string, string> = {}) {
  const reader = await StreamReader.open(`${h.url}/api/realtime?${query}`, headers);
  readers.push(reader);
  // Joined once its first comment line comes (`: open`, sent as it joins).
  const deadline = Date.now() + 3_000;
  while (reader.response.ok && reader.comments === 0 && Date.now() < deadline) {
    await sleep(10);
  }
  return reader;
}

const bearer = (userId: string, expiresIn = '1h') => ({ authorization: `Bearer ${tokenFor(userId, expiresIn)}` });
const names = (events: { event?: string }[]) => events.map((e) => e.event);
let revoked = 0;
/** Every token of `userId` issued until now is revoked, as the revocation feed tells it. */
function revokeTokensOf(userId: string) {
  const nowS = Math.floor(Date.now() / 1000);
  revoked += 1;
  h.revocations.apply({ entries: [{ seq: revoked, userId, notBefore: nowS + 1, until: nowS + 3600 }], last: revoked });
}
/** Where Redis keeps a ticket (tickets.ts): under its digest. */
const ticketKey = (ticket: string) => `realtime:ticket:${createHash('sha256').update(ticket).digest('base64url')}`;

describe('GET /api/realtime: what is refused before a stream starts', () => {
  it.each([
    ['no topics', '', 400, /^topics is required/],
    ['empty topics', 'topics=%20', 400, /^topics is required/],
    ['topics given twice', 'topics=posts&topics=notes', 400, /^topics is required/],
    ['an unknown topic', 'topics=posts,secrets', 400, /^Unknown topic "secrets"/],
    ['a bad tag', 'topics=posts&tag=a%20b', 400, /^tag must be/],
    ['a tag without posts', 'topics=notes&tag=news', 400, /^tag filters the posts topic/],
    ['a protected topic without a token', 'topics=posts,notes', 401, /^No token provided$/],
    ['an unknown ticket', `topics=notes&ticket=${'x'.repeat(43)}`, 401, /^Invalid or expired ticket$/],
    ['a ticket given twice', 'topics=notes&ticket=a&ticket=b', 400, /^ticket must be given once$/],
    ['a lastEventId given twice', 'topics=posts&lastEventId=1&lastEventId=2', 400, /^lastEventId must be given once$/],
  ])('when the request has %s (?%s), then %i {error} as JSON', async (_, query, status, message) => {
    const res = await fetch(`${h.url}/api/realtime?${query}`);
    expect(res.status).toBe(status);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(((await res.json()) as { error: string }).error).toMatch(message);
  });

  it('when the token is expired or not ours, then 401 even for the public topic', async () => {
    const expired = tokenFor(newUserId(), '-1s');
    const foreign = tokenFor(newUserId(), '1h', `${TEST_JWT_SECRET}-other`);
    for (const token of [expired, foreign]) {
      const res = await fetch(`${h.url}/api/realtime?topics=posts`, { headers: { authorization: `Bearer ${token}` } });
      expect(res.status).toBe(401);
    }
  });
});

describe('GET /api/realtime: the events', () => {
  it('when a post is published, then an anonymous posts stream gets posts.upsert with an id and the post as JSON, and keepalive comments', async () => {
    const reader = await open('topics=posts');
    expect(reader.response.headers.get('content-type')).toMatch(/^text\/event-stream/);

    const id = await publishPost('upsert', ['news']);
    const [event] = await reader.waitFor(1);

    expect(event).toEqual({
      id,
      event: 'posts.upsert',
      data: { _id: `post-${published}`, title: `post ${published}`, tags: ['news'] },
    });
    // Keepalives every 300 ms here.
    await sleep(700);
    expect(reader.keepalives).toBeGreaterThan(0);
  });

  it('when a tag is asked for, then only posts with that tag come, upserts and removes', async () => {
    const reader = await open('topics=posts&tag=News');
    await publishPost('upsert', ['sport']);
    const tagged = await publishPost('upsert', ['news', 'sport']);
    await publishPost('remove', ['sport']);
    const removed = await publishPost('remove', ['news']);
    const last = await publishPost('upsert', ['news']);

    const events = await reader.waitFor(3);
    expect(events.map((e) => e.id)).toEqual([tagged, removed, last]);
    expect(names(events)).toEqual(['posts.upsert', 'posts.remove', 'posts.upsert']);
  });

  it('when a post leaves a tag, then that tag’s subscribers are told it is gone, and the unfiltered ones are not', async () => {
    const tagged = await open('topics=posts&tag=news');
    const everything = await open('topics=posts');
    const n = ++published;
    const left = (await h.bus.publish(
      {
        topic: 'posts',
        kind: 'remove',
        tags: ['news'],
        taggedOnly: true,
        owner: newUserId(),
        data: { _id: `post-${n}` },
      } as LiveEvent,
      `test-${n}`,
    )) as string;
    const after = await publishPost('upsert', ['sport']);

    expect((await tagged.waitFor(1)).map((e) => e.id)).toEqual([left]);
    expect((await everything.waitFor(1)).map((e) => e.id)).toEqual([after]);
  });

  it('when another user’s note changes, then a notes stream does not get it; when the caller’s own does, it does', async () => {
    const me = newUserId();
    const reader = await open('topics=notes', bearer(me));
    await publishNote(newUserId());
    const mine = await publishNote(me);

    const events = await reader.waitFor(1);
    await sleep(200);
    expect(events.map((e) => e.id)).toEqual([mine]);
    expect(names(events)).toEqual(['notes.upsert']);
  });
});

describe('resuming with Last-Event-ID', () => {
  it('when a client reconnects after three changes, then it gets exactly those three, in order, and then live ones', async () => {
    const first = await open('topics=posts');
    const seen = await publishPost('upsert');
    await first.waitFor(1);
    first.close();
    const missed = [await publishPost('upsert'), await publishPost('remove'), await publishPost('upsert')];

    const again = await open('topics=posts', { 'last-event-id': seen });
    const live = await publishPost('upsert');

    const events = await again.waitFor(4);
    expect(events.map((e) => e.id)).toEqual([...missed, live]);
  });

  it('when events keep coming while a client resumes, then it gets each one exactly once, in order', async () => {
    const from = await publishPost('upsert');
    const before = [await publishPost('upsert'), await publishPost('upsert')];
    // Published while the stream reads what it missed: some are both read and followed.
    const during = (async () => {
      const sent: string[] = [];
      for (let i = 0; i < 40; i++) sent.push(await publishPost('upsert'));
      return sent;
    })();
    const reader = await StreamReader.open(`${h.url}/api/realtime?topics=posts`, { 'last-event-id': from });
    readers.push(reader);
    const expected = [...before, ...(await during)];

    const events = await reader.waitFor(expected.length);
    await sleep(200);
    expect(reader.events.map((e) => e.id)).toEqual(expected);
    expect(events.length).toBe(expected.length);
  });

  it('when the id is outside the retention window, then the first event is reset, and live events follow', async () => {
    const old = await publishPost('upsert');
    // More than the kept count, and trimmed as if their time were past.
    for (let i = 0; i < RETENTION.keepEvents + 2; i++) await publishPost('upsert');
    await h.bus.trim(Date.now() + RETENTION.keepMs + 1_000);

    const reader = await open('topics=posts', { 'last-event-id': old });
    // After the reset: an event published while the stream still looks for what it missed comes
    // before the reset's id, and the reload the reset asks for covers it.
    await reader.waitFor(1);
    const live = await publishPost('upsert');

    const events = await reader.waitFor(2);
    expect(names(events)).toEqual(['reset', 'posts.upsert']);
    expect(events[0]?.data).toEqual({});
    expect(events[1]?.id).toBe(live);
  });

  it('when the id is not one of the stream’s, then the first event is reset', async () => {
    const reader = await open('topics=posts', { 'last-event-id': 'yesterday' });
    const [event] = await reader.waitFor(1);
    expect(event?.event).toBe('reset');
  });
});

describe('tickets for EventSource', () => {
  async function ticketFor(userId: string, expiresIn = '1h') {
    const res = await fetch(`${h.url}/api/realtime/ticket`, { method: 'POST', headers: bearer(userId, expiresIn) });
    expect(res.status).toBe(201);
    return (await res.json()) as { ticket: string; expiresIn: number };
  }

  it('when a caller trades its token for a ticket, then the ticket opens its stream, to be used within 30 s', async () => {
    const me = newUserId();
    const { ticket, expiresIn } = await ticketFor(me);
    expect(ticket).toMatch(/^[\w-]{43}$/);
    expect(expiresIn).toBe(30);

    const reader = await open(`topics=notes&ticket=${ticket}`);
    const mine = await publishNote(me);
    expect((await reader.waitFor(1)).map((e) => e.id)).toEqual([mine]);
  });

  it('when the stream of a ticket is reconnected with the ticket and Last-Event-ID, then it resumes after that event, and the stream it left behind is cut', async () => {
    const me = newUserId();
    const { ticket } = await ticketFor(me);
    const first = await open(`topics=notes&ticket=${ticket}`);
    const seen = await publishNote(me);
    await first.waitFor(1);
    const missed = await publishNote(me);

    const again = await open(`topics=notes&ticket=${ticket}`, { 'last-event-id': seen });
    expect(again.response.status).toBe(200);
    expect((await again.waitFor(1)).map((e) => e.id)).toEqual([missed]);
    expect(await first.waitForEnd(2_000)).toBe(true);
  });

  it('when a ticket has opened its stream, then it is kept until its access token expires, not for 30 s', async () => {
    const me = newUserId();
    const { ticket } = await ticketFor(me, '1h');
    await open(`topics=notes&ticket=${ticket}`);

    const ttlMs = await h.redis.pttl(ticketKey(ticket));
    expect(ttlMs).toBeGreaterThan(3_500_000);
    expect(ttlMs).toBeLessThanOrEqual(3_600_000);
  });

  it('when the access token behind a ticket has expired, then a reconnect with the ticket is 401', async () => {
    const me = newUserId();
    const { ticket } = await ticketFor(me, '2s');
    const reader = await open(`topics=notes&ticket=${ticket}`);
    expect(await reader.waitForEnd(5_000)).toBe(true);
    expect(names(reader.events)).toEqual(['auth.expired']);

    const again = await fetch(`${h.url}/api/realtime?topics=notes&ticket=${ticket}`);
    expect(again.status).toBe(401);
    expect(((await again.json()) as { error: string }).error).toBe('Invalid or expired ticket');
  });

  it('when the session behind a ticket ends (its token revoked), then its stream ends and a reconnect with the ticket is 401', async () => {
    const me = newUserId();
    const { ticket } = await ticketFor(me);
    const reader = await open(`topics=notes&ticket=${ticket}`);

    revokeTokensOf(me);

    expect(await reader.waitForEnd(3_000)).toBe(true);
    const again = await fetch(`${h.url}/api/realtime?topics=notes&ticket=${ticket}`);
    expect(again.status).toBe(401);
  });

  it('when no token is sent for a ticket, then 401', async () => {
    expect((await fetch(`${h.url}/api/realtime/ticket`, { method: 'POST' })).status).toBe(401);
  });
});

describe('lastEventId, for a new EventSource', () => {
  it('when a stream is opened with ?lastEventId=, then it resumes after that event', async () => {
    const seen = await publishPost('upsert');
    const missed = await publishPost('upsert');

    const reader = await open(`topics=posts&lastEventId=${encodeURIComponent(seen)}`);

    expect((await reader.waitFor(1)).map((e) => e.id)).toEqual([missed]);
  });

  it('when both the header and ?lastEventId= are given, then the header wins', async () => {
    const older = await publishPost('upsert');
    const newer = await publishPost('upsert');
    const last = await publishPost('upsert');

    const reader = await open(`topics=posts&lastEventId=${encodeURIComponent(older)}`, { 'last-event-id': newer });

    expect((await reader.waitFor(1)).map((e) => e.id)).toEqual([last]);
    expect(names(reader.events)).not.toContain('reset');
    expect(reader.events.map((e) => e.id)).not.toContain(newer);
  });
});

describe('a stream lives as long as its token', () => {
  it('when the token that opened it expires, then the stream says auth.expired and ends', async () => {
    const reader = await open('topics=notes', bearer(newUserId(), '2s'));

    expect(await reader.waitForEnd(5_000)).toBe(true);
    expect(names(reader.events)).toEqual(['auth.expired']);
    expect(reader.events[0]?.id).toMatch(/^\d+-\d+$/);
  });

  it('when the user’s tokens are revoked, then the stream says auth.expired and ends within 2 s', async () => {
    const me = newUserId();
    const reader = await open('topics=notes', bearer(me));

    revokeTokensOf(me);
    const revokedAt = Date.now();

    expect(await reader.waitForEnd(3_000)).toBe(true);
    expect(Date.now() - revokedAt).toBeLessThan(2_000);
    expect(names(reader.events)).toEqual(['auth.expired']);
  });
});
