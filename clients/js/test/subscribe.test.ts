/**
 * `subscribe()` in Node, against the whole real system: typed events in order, a resume after a
 * lost connection that misses nothing, access tokens that run out under an open stream (5 s
 * here), revocation, `reset`, refused requests and unsubscribing.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RunningSystem } from '@cs/devstack';
import { eventually, startTestSystem } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  ApiError,
  type ContentClient,
  createContentClient,
  type Note,
  type Post,
  SessionExpiredError,
  type SubscriptionStatus,
} from '../src/index.js';

/** The access tokens' lifetime here: several run out while a stream is open. */
const TOKEN_S = 5;

let system: RunningSystem;
const stops: (() => void)[] = [];

beforeAll(async () => {
  system = await startTestSystem({ env: { AUTH_RATE_LIMIT: '0', RATE_LIMIT: '0', JWT_EXPIRES_IN: `${TOKEN_S}s` } });
}, 60_000);
afterAll(async () => {
  for (const stop of stops) stop();
  await system?.stop();
});

const email = () => `live-${randomBytes(4).toString('hex')}@example.com`;

/**
 * A fetch whose event streams the test can cut, as a network loss would, and hold back from
 * reconnecting until it lets them (`hold`, `release`). It counts the refreshes sent.
 */
function cuttableFetch() {
  const streams = new Set<AbortController>();
  let held: Promise<void> | undefined;
  let release = () => {};
  const seen = { streams: 0, refreshes: 0 };
  const fetchFn = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const request = new Request(input, init);
    const path = new URL(request.url).pathname;
    if (path === '/api/auth/refresh') seen.refreshes += 1;
    if (path !== '/api/realtime') return fetch(request);
    await held;
    seen.streams += 1;
    const controller = new AbortController();
    streams.add(controller);
    request.signal.addEventListener('abort', () => controller.abort());
    return fetch(request, { signal: controller.signal });
  };
  return {
    fetch: fetchFn,
    seen,
    /** Cuts every open stream, and keeps the next one from opening until `release`. */
    cut() {
      held = new Promise((resolve) => {
        release = resolve;
      });
      for (const c of streams) c.abort(new Error('network lost'));
      streams.clear();
    },
    release: () => release(),
  };
}

/** Every event a subscription gets, in order, and its statuses. */
function recorder() {
  const log: string[] = [];
  const statuses: SubscriptionStatus[] = [];
  const errors: unknown[] = [];
  let resets = 0;
  return {
    log,
    statuses,
    errors,
    resets: () => resets,
    posts: {
      upsert: (post: Post) => log.push(`posts.upsert ${post.title} ${post.status}`),
      remove: (id: string) => log.push(`posts.remove ${id}`),
    },
    notes: {
      upsert: (note: Note) => log.push(`notes.upsert ${note.title}`),
      remove: (id: string) => log.push(`notes.remove ${id}`),
    },
    reset: () => {
      resets += 1;
    },
    status: (s: SubscriptionStatus) => statuses.push(s),
    error: (e: unknown) => errors.push(e),
  };
}

async function signedIn(client: ContentClient) {
  await client.register(email(), 'correct horse battery');
  return client;
}

const live = (r: ReturnType<typeof recorder>) =>
  eventually(
    'the subscription live',
    async () => r.statuses.at(-1),
    (s) => s === 'live',
  );

describe('subscribe', () => {
  it('when a post is written, published, changed, unpublished and deleted, then posts gets upsert, upsert, remove in order, typed, and never the draft', async () => {
    const author = await signedIn(createContentClient({ baseUrl: system.gatewayUrl }));
    const reader = createContentClient({ baseUrl: system.gatewayUrl });
    const r = recorder();
    const tag = `t${randomBytes(3).toString('hex')}`;
    stops.push(reader.subscribe(['posts'], { posts: r.posts, status: r.status }, { tag }));
    await live(r);

    const post = await author.posts.create({ title: 'one', body: 'a body of some length', tags: [tag] });
    await author.posts.update(post._id, { status: 'published' });
    await author.posts.update(post._id, { title: 'two' });
    await author.posts.update(post._id, { status: 'draft' });
    await author.posts.remove(post._id);

    await eventually(
      'three events',
      async () => r.log.length,
      (n) => n >= 3,
    );
    await sleep(500);
    expect(r.log).toEqual(['posts.upsert one published', 'posts.upsert two published', `posts.remove ${post._id}`]);
  });

  it('when the connection is lost while three notes change, then after it resumes the subscriber has every change once, in order', async () => {
    const net = cuttableFetch();
    const client = await signedIn(createContentClient({ baseUrl: system.gatewayUrl, fetch: net.fetch }));
    const r = recorder();
    stops.push(client.subscribe(['notes'], { notes: r.notes, status: r.status }));
    await live(r);
    const note = await client.notes.create({ title: 'first' });
    await eventually(
      'the first note',
      async () => r.log.length,
      (n) => n === 1,
    );

    net.cut();
    await eventually(
      'the subscription reconnecting',
      async () => r.statuses.at(-1),
      (s) => s === 'reconnecting',
    );
    await client.notes.update(note._id, { title: 'second' });
    const other = await client.notes.create({ title: 'third' });
    await client.notes.remove(note._id);
    net.release();

    await eventually(
      'the three changes',
      async () => r.log.length,
      (n) => n >= 4,
    );
    await sleep(500);
    // The first note's changes in the order they were made; the other note's once (order is
    // promised per document).
    expect(r.log.filter((e) => e !== 'notes.upsert third')).toEqual([
      'notes.upsert first',
      'notes.upsert second',
      `notes.remove ${note._id}`,
    ]);
    expect(r.log.filter((e) => e === 'notes.upsert third')).toHaveLength(1);
    expect(net.seen.streams).toBe(2);
    expect(other._id).toBeDefined();
  });

  it(`when the access token (${TOKEN_S} s) runs out under an open stream, then it renews, resumes, and loses no note written meanwhile`, async () => {
    const net = cuttableFetch();
    const client = await signedIn(createContentClient({ baseUrl: system.gatewayUrl, fetch: net.fetch }));
    const r = recorder();
    stops.push(client.subscribe(['notes'], { notes: r.notes, status: r.status, error: r.error }));
    await live(r);

    const titles: string[] = [];
    const until = Date.now() + 2.5 * TOKEN_S * 1000;
    for (let i = 0; Date.now() < until; i++) {
      titles.push(`n${i}`);
      await client.notes.create({ title: `n${i}` });
      await sleep(400);
    }

    await eventually(
      'every note',
      async () => r.log.length,
      (n) => n >= titles.length,
    );
    // Each note once. (Order is promised per document; these are all different notes, and an
    // event whose immediate try a poll took first may come a backoff later.)
    expect([...r.log].sort()).toEqual(titles.map((t) => `notes.upsert ${t}`).sort());
    expect(r.errors).toEqual([]);
    // The stream was opened again on each fresh token: at least twice in 12.5 s of 5 s tokens.
    expect(net.seen.streams).toBeGreaterThanOrEqual(3);
    expect(r.statuses.filter((s) => s === 'ended')).toEqual([]);
  }, 30_000);

  it('when every session of the subscriber is ended, then its stream ends within 5 s with SessionExpiredError', async () => {
    const expired: unknown[] = [];
    const client = await signedIn(
      createContentClient({ baseUrl: system.gatewayUrl, onSessionExpired: (e) => expired.push(e) }),
    );
    const other = createContentClient({ baseUrl: system.gatewayUrl });
    const r = recorder();
    stops.push(client.subscribe(['notes', 'posts'], { notes: r.notes, status: r.status, error: r.error }));
    await live(r);
    // Logged out everywhere from another client of the same account.
    const session = client.session();
    await other.login(session?.email ?? '', 'correct horse battery');
    const endedAt = Date.now();
    await other.sessions.endAll();

    await eventually(
      'the subscription ended',
      async () => r.statuses.at(-1),
      (s) => s === 'ended',
      { timeoutMs: 5_000 },
    );
    expect(Date.now() - endedAt).toBeLessThan(5_000);
    expect(r.errors).toHaveLength(1);
    expect(r.errors[0]).toBeInstanceOf(SessionExpiredError);
    expect(expired).toHaveLength(1);
  });

  it('when unsubscribed while its token is being renewed, then it says nothing more: no SessionExpiredError, no error', async () => {
    // The refresh the stream asks for is held until the subscription has been ended.
    let refreshSent = false;
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const heldFetch = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
      const request = new Request(input, init);
      if (new URL(request.url).pathname === '/api/auth/refresh') {
        refreshSent = true;
        await held;
      }
      return fetch(request);
    };
    const expired: unknown[] = [];
    const client = await signedIn(
      createContentClient({ baseUrl: system.gatewayUrl, fetch: heldFetch, onSessionExpired: (e) => expired.push(e) }),
    );
    const r = recorder();
    const stop = client.subscribe(['notes'], { notes: r.notes, status: r.status, error: r.error });
    stops.push(stop);
    await live(r);
    const other = createContentClient({ baseUrl: system.gatewayUrl });
    await other.login(client.session()?.email ?? '', 'correct horse battery');
    await other.sessions.endAll();
    await eventually(
      'the stream renewing its token',
      async () => refreshSent,
      (sent) => sent,
      { timeoutMs: 5_000 },
    );

    stop();
    release();
    await eventually(
      'the session found over',
      async () => client.session(),
      (session) => session === undefined,
    );
    await sleep(200);
    expect(expired).toEqual([]);
    expect(r.errors).toEqual([]);
    expect(r.statuses.at(-1)).toBe('ended');
  });

  it('when it resumes from an id the server no longer holds, then reset() is called and events go on from there', async () => {
    const author = await signedIn(createContentClient({ baseUrl: system.gatewayUrl }));
    const reader = createContentClient({ baseUrl: system.gatewayUrl });
    const r = recorder();
    const tag = `t${randomBytes(3).toString('hex')}`;
    stops.push(
      reader.subscribe(
        ['posts'],
        { posts: r.posts, reset: r.reset, status: r.status },
        { tag, lastEventId: '99999999999999-0' },
      ),
    );
    await live(r);
    const draft = await author.posts.create({ title: 'after', body: 'a body of some length', tags: [tag] });
    const post = await author.posts.update(draft._id, { status: 'published' });

    await eventually(
      'the post',
      async () => r.log.length,
      (n) => n >= 1,
    );
    expect(r.resets()).toBe(1);
    expect(r.log).toEqual(['posts.upsert after published']);
    expect(post.status).toBe('published');
  });

  it('when the API refuses the subscription (a bad tag), then it ends with an ApiError 400 and is not tried again', async () => {
    const net = cuttableFetch();
    const reader = createContentClient({ baseUrl: system.gatewayUrl, fetch: net.fetch });
    const r = recorder();
    stops.push(reader.subscribe(['posts'], { status: r.status, error: r.error }, { tag: 'not a tag!' }));

    await eventually(
      'the subscription ended',
      async () => r.statuses.at(-1),
      (s) => s === 'ended',
    );
    await sleep(1_000);
    expect(r.errors).toHaveLength(1);
    expect(r.errors[0]).toBeInstanceOf(ApiError);
    expect((r.errors[0] as ApiError).status).toBe(400);
    expect(net.seen.streams).toBe(1);
  });

  it('when unsubscribed, then no event comes after, and the stream is closed', async () => {
    const client = await signedIn(createContentClient({ baseUrl: system.gatewayUrl }));
    const r = recorder();
    const stop = client.subscribe(['notes'], { notes: r.notes, status: r.status });
    await live(r);
    await client.notes.create({ title: 'before' });
    await eventually(
      'the note',
      async () => r.log.length,
      (n) => n === 1,
    );

    stop();
    await client.notes.create({ title: 'after' });
    await sleep(1_000);
    expect(r.log).toEqual(['notes.upsert before']);
    expect(r.statuses.at(-1)).toBe('ended');
  });
});
