import { describe, expect, it } from '@jest/globals';
import { createConformanceChecker } from '../src';

const checker = createConformanceChecker();
const post = {
  _id: '0123456789abcdef01234567',
  title: 't',
  body: 'b',
  authorId: '0123456789abcdef01234567',
  status: 'draft',
  tags: [],
  publishedAt: null,
  createdAt: '2024-01-01T00:00:00.000Z',
  updatedAt: '2024-01-01T00:00:00.000Z',
};
const json = 'application/json; charset=utf-8';
const observed = (over: Partial<Parameters<typeof checker.check>[0]>) => ({
  method: 'GET',
  path: '/api/posts/0123456789abcdef01234567',
  status: 200,
  contentType: json,
  body: post,
  text: JSON.stringify(post),
  ...over,
});

describe('the conformance checker', () => {
  it('when a response matches its operation, then there is nothing to report', () => {
    expect(checker.check(observed({}))).toEqual([]);
  });

  it('when /my-posts is requested, then it is not mistaken for /{id}', () => {
    expect(checker.operationOf('GET', '/api/posts/my-posts')).toBe('/api/posts/my-posts');
    expect(checker.check(observed({ path: '/api/posts/my-posts', body: [post] }))).toEqual([]);
  });

  it('when the status is not declared, then it says so', () => {
    expect(checker.check(observed({ status: 418, body: { error: 'x' } }))).toEqual([
      'GET /api/posts/{id} → 418: status 418 is not declared',
    ]);
  });

  it('when the body breaks the schema, an extra field included, then each break is named', () => {
    const violations = checker.check(observed({ body: { ...post, status: 'archived', secret: 1 } }));

    expect(violations.join('\n')).toMatch(/status must be equal to one of the allowed values/);
    expect(violations.join('\n')).toMatch(/must NOT have additional properties/);
  });

  it('when the error body is not the contract shape, then it is a violation', () => {
    expect(checker.check(observed({ status: 404, body: { message: 'nope' } }))).not.toEqual([]);
    expect(checker.check(observed({ status: 404, body: { error: 'Post not found' } }))).toEqual([]);
  });

  it('when a body comes where none is declared, or the media type is wrong, then it is a violation', () => {
    expect(checker.check(observed({ method: 'DELETE', status: 204, body: {}, text: '{}' }))).toHaveLength(1);
    expect(checker.check(observed({ contentType: 'text/html' }))).toHaveLength(1);
  });

  it('when the route is not a public one, then it is not checked', () => {
    expect(checker.check(observed({ method: 'POST', path: '/internal/uploads/claim', status: 418 }))).toEqual([]);
  });
});
