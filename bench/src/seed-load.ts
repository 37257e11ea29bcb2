/**
 * Seeding as a client does it, in a process of its own (as load.ts): each post created as a draft
 * and then published, `inFlight` posts at a time, through the content service's API or
 * PocketBase's. The posts are the same on both: `post(i)`. Prints a SeedResult as JSON. With
 * `publishOnly`, the drafts are made first, untimed, and only their publishes are timed.
 *
 *   node seed-load.js '{"system":"ours","url":…,"authors":[{"token":…,"id":…}],"first":0,"count":2000,"inFlight":16}'
 */
import { percentile } from './stats';

export type System = 'ours' | 'pocketbase';

export interface Author {
  token: string;
  id: string;
}

export interface SeedSpec {
  system: System;
  url: string;
  /** Post n is written by authors[n % authors.length]. */
  authors: Author[];
  /** The number of the first post: numbers make titles and tags. */
  first: number;
  count: number;
  inFlight: number;
  /** Time the publishes alone: every draft is made before the clock starts. */
  publishOnly?: boolean;
}

export interface SeedResult {
  posts: number;
  seconds: number;
  postsPerS: number;
  /** Of what is timed of one post (its create and publish together, or its publish), in milliseconds. */
  p50: number;
  p99: number;
  failures: number;
  /** The first post written, published. */
  firstId: string;
}

/** Post number i, the same on both systems: a tenth of them tagged "listed", the rest "other". */
export function post(i: number, tag?: string): { title: string; text: string; tags: string[] } {
  return {
    title: `Post ${i}`,
    text: 'A body of a realistic length for a short post in the list. '.repeat(3).trim(),
    tags: [tag ?? (i % 10 === 0 ? 'listed' : 'other')],
  };
}

/** A JSON request as `token`'s user; anything but 2xx throws with the answer. */
export async function call(
  url: string,
  method: string,
  token: string,
  body: unknown,
): Promise<Record<string, unknown>> {
  const res = await fetch(url, {
    method,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, unknown>;
}

/** Creates post number i as a draft by `author`: its id. */
export async function createDraft(system: System, url: string, author: Author, i: number, tag?: string) {
  const p = post(i, tag);
  if (system === 'ours') {
    const made = await call(`${url}/api/posts`, 'POST', author.token, { title: p.title, body: p.text, tags: p.tags });
    return made._id as string;
  }
  const made = await call(`${url}/api/collections/posts/records`, 'POST', author.token, {
    title: p.title,
    content: p.text,
    tags: p.tags,
    published: false,
    author: author.id,
  });
  return made.id as string;
}

/** Publishes a draft of `author`'s. */
export async function publish(system: System, url: string, author: Author, id: string): Promise<void> {
  if (system === 'ours') await call(`${url}/api/posts/${id}`, 'PUT', author.token, { status: 'published' });
  else await call(`${url}/api/collections/posts/records/${id}`, 'PATCH', author.token, { published: true });
}

/** Runs `work` for posts spec.first … first + count - 1, `inFlight` at a time, each by its author. */
async function eachPost(spec: SeedSpec, work: (i: number, author: Author) => Promise<void>): Promise<void> {
  let next = spec.first;
  const end = spec.first + spec.count;
  await Promise.all(
    Array.from({ length: spec.inFlight }, async () => {
      while (next < end) {
        const i = next++;
        await work(i, spec.authors[i % spec.authors.length] as Author);
      }
    }),
  );
}

async function main(): Promise<void> {
  const spec = JSON.parse(process.argv[2] ?? '{}') as SeedSpec;
  const drafts = new Map<number, string>();
  if (spec.publishOnly)
    await eachPost(spec, async (i, author) => {
      drafts.set(i, await createDraft(spec.system, spec.url, author, i));
    });
  const latencies: number[] = [];
  let failures = 0;
  let firstId = '';
  const started = performance.now();
  await eachPost(spec, async (i, author) => {
    const t = performance.now();
    try {
      const id = drafts.get(i) ?? (await createDraft(spec.system, spec.url, author, i));
      await publish(spec.system, spec.url, author, id);
      latencies.push(performance.now() - t);
      if (i === spec.first) firstId = id;
    } catch (err) {
      failures += 1;
      if (failures <= 3) process.stderr.write(`seed-load: ${(err as Error).message}\n`);
    }
  });
  const seconds = (performance.now() - started) / 1000;
  const result: SeedResult = {
    posts: latencies.length,
    seconds,
    postsPerS: latencies.length / seconds,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    failures,
    firstId,
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

// Imported by scenario 14 (scenarios/pocketbase.ts, pocketbase/) for post() and the calls: run only as a script.
if (require.main === module) {
  void main().catch((err) => {
    process.stderr.write(`${String(err)}\n`);
    process.exit(1);
  });
}
