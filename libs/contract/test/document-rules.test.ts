import { describe, expect, it } from '@jest/globals';
import { openApiDocument } from '../src';

/** Every `pattern` of the document, with where it is. */
function patternsOf(value: unknown, at = '#'): [string, string][] {
  if (Array.isArray(value)) return value.flatMap((item, i) => patternsOf(item, `${at}/${i}`));
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, inner]) =>
    key === 'pattern' && typeof inner === 'string'
      ? [[at, inner] as [string, string]]
      : patternsOf(inner, `${at}/${key}`),
  );
}

describe('the rules the OpenAPI document states', () => {
  it('when a tool of another language reads a pattern, then it holds no surrogate code point it cannot compile', () => {
    // Rust's and Python's regex engines work on code points: a range of UTF-16 halves does not
    // compile there, and schemathesis dropped the whole e-mail pattern of register, password reset
    // and e-mail change for it (x-wellFormed says the rule instead).
    const surrogate = /\\u[dD][89a-fA-F][0-9a-fA-F]{2}/;
    expect(patternsOf(openApiDocument).filter(([, pattern]) => surrogate.test(pattern))).toEqual([]);
  });

  it('when GET /api/users is read, then its ids parameter states the pattern the route checks', () => {
    const ids = openApiDocument.paths['/api/users'].get.parameters?.find((p) => p.name === 'ids');
    const pattern = new RegExp(((ids?.schema ?? {}) as { pattern?: string }).pattern ?? '.*');
    expect(pattern.test('0123456789abcdef01234567, 0123456789ABCDEF01234568')).toBe(true);
    for (const refused of ['', 'not-an-id', '0123456789abcdef01234567,', '0123456789abcdef0123456'])
      expect(pattern.test(refused)).toBe(false);
  });
});
