import { HttpError } from '@cs/errors';
import { describe, expect, it } from '@jest/globals';
import { createWindowLimit } from '../src/window-limit';

/** A clock the test moves. */
function clock(start = 1_000_000) {
  let at = start;
  return {
    now: () => at,
    advance(ms: number) {
      at += ms;
    },
  };
}

/** What `take` does: 'taken', or the refusal's status and Retry-After. */
function outcome(take: () => void): string {
  try {
    take();
    return 'taken';
  } catch (err) {
    if (!(err instanceof HttpError)) throw err;
    return `${err.status} retry-after ${err.headers?.['Retry-After']}`;
  }
}

describe('a window limit', () => {
  it('when a key takes past its limit, then 429 with the seconds until its window ends', () => {
    const time = clock();
    const limit = createWindowLimit({ limit: 3, windowMs: 60_000, now: time.now });
    expect([1, 2, 3].map(() => outcome(() => limit.take('a')))).toEqual(['taken', 'taken', 'taken']);
    time.advance(20_500);

    expect(outcome(() => limit.take('a'))).toBe('429 retry-after 40');
    expect(outcome(() => limit.take('b'))).toBe('taken');
  });

  it('when the window has passed, then the key starts again', () => {
    const time = clock();
    const limit = createWindowLimit({ limit: 1, windowMs: 1_000, now: time.now });
    limit.take('a');
    expect(outcome(() => limit.take('a'))).toBe('429 retry-after 1');
    time.advance(1_000);

    expect(outcome(() => limit.take('a'))).toBe('taken');
  });

  it('when the limit is 0, then nothing is refused', () => {
    const limit = createWindowLimit({ limit: 0, windowMs: 60_000 });
    for (let i = 0; i < 1_000; i++) limit.take('a');
    expect(outcome(() => limit.take('a'))).toBe('taken');
  });

  it('when more keys than maxKeys take, then the oldest window is forgotten', () => {
    const time = clock();
    const limit = createWindowLimit({ limit: 1, windowMs: 60_000, maxKeys: 2, now: time.now });
    limit.take('a');
    limit.take('b');
    limit.take('c');

    expect(outcome(() => limit.take('a'))).toBe('taken');
    expect(outcome(() => limit.take('c'))).toBe('429 retry-after 60');
  });
});
