/**
 * Which streams an event visits: only those filed for it, each once. What each then gets is
 * `delivers`'s call, proved through HTTP in streams.test.ts; here, that the others are left out.
 */
import type { LiveEvent } from '@cs/contract';
import { describe, expect, it } from '@jest/globals';
import { Audience, type Listener } from '../src/audience';
import { subscriptionOf } from '../src/topics';

interface Named extends Listener {
  name: string;
}

const stream = (name: string, topics: string, tag?: string, userId?: string): Named => ({
  name,
  subscription: subscriptionOf({ topics, tag }),
  userId,
});

const streams = [
  stream('anyone on posts', 'posts'),
  stream('anyone on posts tagged news', 'posts', 'news'),
  stream('anyone on posts tagged cats', 'posts', 'cats'),
  stream('ann on her notes and posts', 'posts,notes', undefined, 'ann'),
  stream('ann on her posts', 'my-posts', undefined, 'ann'),
  stream('bob on his notes and my-posts', 'notes,my-posts', undefined, 'bob'),
];

function visited(audience: Audience<Named>, event: LiveEvent): string[] {
  return [...audience.of(event)].map((s) => s.name).sort();
}

describe('Audience', () => {
  const audience = new Audience<Named>();
  for (const s of streams) audience.add(s);

  it('when a post is published with tags, then it visits the untagged posts streams and those of its tags, once each', () => {
    // An owner on a public event changes nothing: posts names none, and none is looked at.
    const event = {
      topic: 'posts',
      kind: 'upsert',
      owner: 'ann',
      tags: ['news', 'news', 'dogs'],
      data: {},
    } as LiveEvent;
    expect(visited(audience, event)).toEqual([
      'ann on her notes and posts',
      'anyone on posts',
      'anyone on posts tagged news',
    ]);
  });

  it('when a post leaves a tag (only for its subscribers), then it visits that tag’s streams only', () => {
    const event: LiveEvent = {
      topic: 'posts',
      kind: 'remove',
      tags: ['cats'],
      taggedOnly: true,
      data: { _id: 'a-post' },
    };
    expect(visited(audience, event)).toEqual(['anyone on posts tagged cats']);
  });

  it('when a note or a draft changes, then it visits its owner’s streams on that topic only', () => {
    expect(visited(audience, { topic: 'notes', kind: 'upsert', owner: 'bob', data: {} })).toEqual([
      'bob on his notes and my-posts',
    ]);
    expect(visited(audience, { topic: 'my-posts', kind: 'upsert', owner: 'ann', data: {} })).toEqual([
      'ann on her posts',
    ]);
    expect(visited(audience, { topic: 'notes', kind: 'upsert', owner: 'carol', data: {} })).toEqual([]);
  });

  it('when a stream is deleted, then no event visits it', () => {
    const own = new Audience<Named>();
    const bob = streams[5] as Named;
    own.add(bob);
    own.delete(bob);
    expect(visited(own, { topic: 'notes', kind: 'upsert', owner: 'bob', data: {} })).toEqual([]);
    expect(visited(own, { topic: 'my-posts', kind: 'upsert', owner: 'bob', data: {} })).toEqual([]);
  });
});
