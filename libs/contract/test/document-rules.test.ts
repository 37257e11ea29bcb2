import { describe, expect, it } from '@jest/globals';
import { openApiDocument, WHITE_SPACE } from '../src';

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

  it('when a tool of another language reads a pattern, then no class in it means other characters there', () => {
    // `\s`, `\d` and `\w` are classes each engine fills by its own rules. schemathesis reads `\s`
    // as ASCII's six (it compiles with re.ASCII, for `\d` and `\w`): to it "a\u00a0b@c.d" is a valid
    // address and "\u00a0" a title that is not blank, and validation refuses both. Python's plain
    // `re` takes U+001C–U+001F and U+0085 besides. `[\s\S]` is every character to every engine.
    const shorthand = /\\[sSdDwW]/;
    const readByEngine = patternsOf(openApiDocument).filter(([, pattern]) =>
      shorthand.test(pattern.replaceAll('[\\s\\S]', '')),
    );
    expect(readByEngine).toEqual([]);
  });

  it('when the patterns say white space, then it is what JavaScript trims, character for character', () => {
    const listed = new RegExp(`[${WHITE_SPACE}]`, 'u');
    const differ: string[] = [];
    for (let code = 0; code <= 0x10ffff; code++) {
      if (code >= 0xd800 && code <= 0xdfff) continue;
      const char = String.fromCodePoint(code);
      if (listed.test(char) !== /\s/u.test(char) || listed.test(char) !== (char.trim() === ''))
        differ.push(code.toString(16));
    }
    expect(differ).toEqual([]);
  });
});
