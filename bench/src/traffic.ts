/**
 * Mixed traffic through the gateway, for the fault tests and the soak: workers that each act as
 * their own user (reads, writes, logins, upload links) and record every outcome, with a ledger of
 * every write that got a 2xx, so that afterwards each can be read back and compared.
 */

import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Answer, callApi } from './traffic/answer';
import { DEFAULT_MIX, OPS, type OpName } from './traffic/operations';
import { type Outcome, type Summary, summarize } from './traffic/outcome';

// The traffic's vocabulary, where the fault tests and the soak import it from.
export type { Answer } from './traffic/answer';
export { DEFAULT_MIX, OPS, type OpName, SERVICE_OF } from './traffic/operations';
export type { Outcome, Summary } from './traffic/outcome';

interface Written {
  owner: string;
  /** What the resource must hold now, if `settled`. */
  fields: Record<string, unknown>;
  /** False after a write whose outcome is unknown (no answer, or 5xx): its effect may or may not be there. */
  settled: boolean;
  /** Deleted with a 204: it must be gone. */
  deleted?: boolean;
}

type Kind = 'posts' | 'notes';

interface User {
  email: string;
  password: string;
  token: string;
  posts: string[];
  notes: string[];
}

export interface TrafficOptions {
  baseUrl: string;
  workers: number;
  mix?: Partial<Record<OpName, number>>;
  /** The client gives up on a request after this long; it is then an outcome with status 0. */
  requestTimeoutMs?: number;
  /**
   * How many posts, and how many notes, a worker keeps: a long run holds a steady amount of
   * data, as a real system does, instead of lists that grow without end. Default 50.
   */
  keep?: number;
  /** Tag on every post written, so reads can filter to this run's posts. */
  tag?: string;
}
/** A small deterministic generator, so a run's sequence of operations can be repeated. */
function prng(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 2 ** 32;
  };
}

export class Traffic {
  readonly outcomes: Outcome[] = [];
  readonly written = { posts: new Map<string, Written>(), notes: new Map<string, Written>() };
  readonly tag: string;
  private readonly users: User[] = [];
  private readonly mix: [OpName, number][];
  private readonly timeoutMs: number;
  private readonly keep: number;
  private running = false;
  private loops: Promise<void>[] = [];

  constructor(private readonly options: TrafficOptions) {
    this.tag = options.tag ?? `load-${randomBytes(4).toString('hex')}`;
    this.timeoutMs = options.requestTimeoutMs ?? 10_000;
    this.keep = options.keep ?? 50;
    const weights = { ...DEFAULT_MIX, ...options.mix };
    this.mix = OPS.map((op) => [op, weights[op]] as [OpName, number]).filter(([, w]) => w > 0);
  }

  /** Registers one user per worker. */
  async prepare(): Promise<void> {
    for (let i = 0; i < this.options.workers; i++) {
      const email = `${this.tag}-w${i}@example.com`;
      const password = `pw-${randomBytes(6).toString('hex')}`;
      const res = await this.fetch('/api/auth/register', { method: 'POST', body: { email, password } });
      if (res.status !== 201) throw new Error(`could not register worker ${i}: ${res.status}`);
      this.users.push({ email, password, token: (res.body as { token: string }).token, posts: [], notes: [] });
    }
  }

  start(): void {
    if (this.users.length === 0) throw new Error('prepare() first');
    this.running = true;
    this.loops = this.users.map((user, i) => this.work(user, prng(i + 1)));
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
  }

  /** Outcomes of requests started in [from, to). */
  between(from: number, to = Number.POSITIVE_INFINITY): Outcome[] {
    return this.outcomes.filter((o) => o.startedAt >= from && o.startedAt < to);
  }

  /** What a set of outcomes comes to (traffic/outcome.ts). */
  static summarize(outcomes: readonly Outcome[]): Summary {
    return summarize(outcomes);
  }

  /**
   * Reads back every post and note whose write got a 2xx, as its owner, and returns what does
   * not match: missing, or (when the last write's outcome is known) holding other data, or still
   * there after a 204 delete.
   */
  async verify(): Promise<{ checked: number; problems: string[] }> {
    const problems: string[] = [];
    const entries = [
      ...[...this.written.posts].map(([id, w]) => ({ path: `/api/posts/${id}`, w })),
      ...[...this.written.notes].map(([id, w]) => ({ path: `/api/notes/${id}`, w })),
    ];
    for (let i = 0; i < entries.length; i += 8) {
      await Promise.all(
        entries.slice(i, i + 8).map(async ({ path, w }) => {
          const res = await this.fetch(path, { token: w.owner });
          if (w.deleted) return res.status === 404 || problems.push(`${path}: ${res.status} after its delete`);
          if (res.status !== 200) return problems.push(`${path}: ${res.status}`);
          if (!w.settled) return;
          const body = res.body as Record<string, unknown>;
          for (const [field, value] of Object.entries(w.fields)) {
            if (JSON.stringify(body[field]) !== JSON.stringify(value)) {
              problems.push(`${path}: ${field} is ${JSON.stringify(body[field])}, not ${JSON.stringify(value)}`);
            }
          }
        }),
      );
    }
    return { checked: entries.length, problems };
  }

  private pick(random: () => number): OpName {
    const total = this.mix.reduce((sum, [, w]) => sum + w, 0);
    let roll = random() * total;
    for (const [op, weight] of this.mix) {
      roll -= weight;
      if (roll < 0) return op;
    }
    return this.mix[0]?.[0] ?? 'listPosts';
  }

  private async work(user: User, random: () => number): Promise<void> {
    let n = 0;
    while (this.running) {
      n += 1;
      const op = this.pick(random);
      const outcome = await this.run(op, user, random, n);
      this.outcomes.push(outcome);
      // A worker that cannot reach anything must not spin: back off a little on failures.
      if (outcome.status === 0 || outcome.status >= 500) await sleep(20);
    }
  }

  private async run(op: OpName, user: User, random: () => number, n: number): Promise<Outcome> {
    const token = user.token;
    const one = (list: string[]) => list[Math.floor(random() * list.length)];
    const startedAt = Date.now();
    const done = (res: Answer): Outcome => ({
      op,
      status: res.status,
      json: res.json,
      startedAt,
      ms: Date.now() - startedAt,
      requestId: res.requestId,
      ...(res.error ? { error: res.error } : {}),
      ...(res.detail ? { detail: res.detail } : {}),
    });
    switch (op) {
      case 'listPosts':
        return done(await this.fetch(`/api/posts?tag=${this.tag}&limit=20&page=${1 + (n % 3)}`));
      case 'getPost': {
        const id = one(user.posts);
        return done(await this.fetch(id ? `/api/posts/${id}` : `/api/posts?tag=${this.tag}`, { token }));
      }
      case 'myPosts':
        return done(await this.fetch('/api/posts/my-posts', { token }));
      case 'createPost': {
        if (user.posts.length >= this.keep) return this.run('deletePost', user, random, n);
        const fields = {
          title: `Post ${n} by ${user.email}`,
          body: `Body ${randomBytes(8).toString('hex')}, long enough.`,
          tags: [this.tag],
        };
        return done(await this.create('posts', user.posts, token, fields));
      }
      case 'updatePost': {
        const id = one(user.posts);
        if (!id) return this.run('createPost', user, random, n);
        const change = { title: `Post ${n}, edited`, status: random() < 0.5 ? 'published' : 'draft' };
        return done(await this.update('posts', id, token, change));
      }
      case 'createNote': {
        if (user.notes.length >= this.keep) return this.run('deleteNote', user, random, n);
        const fields = { title: `Note ${n}`, body: `Text ${randomBytes(8).toString('hex')}` };
        return done(await this.create('notes', user.notes, token, fields));
      }
      case 'attachNote': {
        // The whole attachment path: a link from files, the bytes to storage, and a note that
        // notes only creates after files has claimed the key.
        if (user.notes.length >= this.keep) return this.run('deleteNote', user, random, n);
        const link = await this.fetch('/api/upload-url', {
          method: 'POST',
          token,
          body: { contentType: 'text/plain', filename: `a${n}.txt`, size: 64 },
        });
        if (link.status !== 200) return done(link);
        const { url, key, headers } = link.body as { url: string; key: string; headers: Record<string, string> };
        const put = await fetch(url, { method: 'PUT', headers, body: randomBytes(32).toString('hex') }).then(
          async (res) => ({ status: res.status, text: await res.text() }),
          () => ({ status: 0, text: 'connection failed' }),
        );
        // Storage keeps no request ids: the failure names the request that gave the link.
        if (put.status !== 200)
          return done({
            status: put.status,
            json: false,
            body: put.text,
            error: 'storage PUT',
            requestId: link.requestId,
          });
        const fields = { title: `Attached ${n}`, body: 'with a file', attachmentKey: key };
        return done(await this.create('notes', user.notes, token, fields));
      }
      case 'updateNote': {
        const id = one(user.notes);
        if (!id) return this.run('createNote', user, random, n);
        return done(await this.update('notes', id, token, { body: `Edited ${n} ${randomBytes(4).toString('hex')}` }));
      }
      case 'deletePost':
        return done(await this.remove('posts', user.posts, token));
      case 'deleteNote':
        return done(await this.remove('notes', user.notes, token));
      case 'listNotes':
        return done(await this.fetch('/api/notes', { token }));
      case 'login':
        return done(
          await this.fetch('/api/auth/login', { method: 'POST', body: { email: user.email, password: user.password } }),
        );
      case 'uploadUrl':
        return done(
          await this.fetch('/api/upload-url', {
            method: 'POST',
            token,
            body: { contentType: 'text/plain', filename: `n${n}.txt`, size: 100 },
          }),
        );
    }
  }

  /** Creates an item; a 201 enters it in the user's list and the ledger. */
  private async create(kind: Kind, ids: string[], token: string, fields: Record<string, unknown>): Promise<Answer> {
    const res = await this.fetch(`/api/${kind}`, { method: 'POST', token, body: fields });
    if (res.status === 201) {
      const id = (res.body as { _id: string })._id;
      ids.push(id);
      this.written[kind].set(id, { owner: token, fields, settled: true });
    }
    return res;
  }

  /** Changes an item; a 200 updates what the ledger expects, an unknown outcome unsettles it. */
  private async update(kind: Kind, id: string, token: string, change: Record<string, unknown>): Promise<Answer> {
    const res = await this.fetch(`/api/${kind}/${id}`, { method: 'PUT', token, body: change });
    const entry = this.written[kind].get(id);
    if (entry && res.status === 200) Object.assign(entry.fields, change);
    if (entry && (res.status === 0 || res.status >= 500)) entry.settled = false;
    return res;
  }

  /** Deletes the oldest of a user's items; a 204 marks it deleted in the ledger. */
  private async remove(kind: Kind, ids: string[], token: string): Promise<Answer> {
    const id = ids.shift();
    if (!id) return this.fetch(`/api/${kind}`, { token });
    const res = await this.fetch(`/api/${kind}/${id}`, { method: 'DELETE', token });
    const entry = this.written[kind].get(id);
    if (res.status === 204) {
      if (entry) entry.deleted = true;
    } else if (res.status === 0 || res.status >= 500) {
      // Maybe deleted, maybe not: neither can be checked.
      this.written[kind].delete(id);
    }
    // Any other answer leaves the ledger as it was, and verify() reports what is wrong.
    return res;
  }

  /** One request to the API, as a worker sends it (traffic/answer.ts). */
  fetch(path: string, init: { method?: string; token?: string; body?: unknown } = {}): Promise<Answer> {
    return callApi(this.options.baseUrl, this.timeoutMs, path, init);
  }
}
