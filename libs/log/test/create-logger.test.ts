import { Writable } from 'node:stream';
import { describe, expect, it } from '@jest/globals';
import { accessLogger, createLogger } from '../src';

/** A logger whose lines are kept, parsed. */
function capture() {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { logger: createLogger({ name: 'test', destination }), lines };
}

describe('createLogger', () => {
  it('when two unrelated lines are logged, then the second carries nothing of the first', () => {
    const { logger, lines } = capture();

    logger.error(
      { method: 'DELETE', path: '/api/notes/1', status: 500, userId: 'u1', err: new Error('boom') },
      'first',
    );
    logger.info('second');

    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({ method: 'DELETE', status: 500, userId: 'u1', msg: 'first' });
    for (const field of ['method', 'path', 'status', 'userId', 'err']) expect(lines[1]).not.toHaveProperty(field);
    expect(lines[1]).toMatchObject({ service: 'test', msg: 'second' });
  });

  it('when a line carries a password, token or authorization, then it is redacted', () => {
    const { logger, lines } = capture();

    logger.info({ password: 'p', token: 't', headers: { authorization: 'Bearer x' } }, 'secrets');

    expect(lines[0]).toMatchObject({
      password: '[redacted]',
      token: '[redacted]',
      headers: { authorization: '[redacted]' },
    });
  });

  it('when a line carries a refresh token or cookies, in a body or in headers, then they are redacted', () => {
    const { logger, lines } = capture();

    logger.info(
      {
        refreshToken: 'r',
        body: { refreshToken: 'r' },
        cookie: 'cs_refresh=r',
        'set-cookie': 'cs_refresh=r',
        headers: { cookie: 'cs_refresh=r', 'set-cookie': ['cs_refresh=r; HttpOnly'] },
        req: { headers: { cookie: 'cs_refresh=r' } },
        res: { headers: { 'set-cookie': ['cs_refresh=r; HttpOnly'] } },
      },
      'sessions',
    );

    expect(lines[0]).toMatchObject({
      refreshToken: '[redacted]',
      body: { refreshToken: '[redacted]' },
      cookie: '[redacted]',
      'set-cookie': '[redacted]',
      headers: { cookie: '[redacted]', 'set-cookie': '[redacted]' },
      req: { headers: { cookie: '[redacted]' } },
      res: { headers: { 'set-cookie': '[redacted]' } },
    });
    expect(JSON.stringify(lines[0])).not.toContain('cs_refresh');
  });
});

describe('accessLogger', () => {
  it('when an access line is written, then it carries the base fields, its own, and nothing else; the service’s lines are still redacted', () => {
    const { logger, lines } = capture();
    const access = accessLogger(logger);

    access.info({ requestId: 'r1', method: 'GET', path: '/api/posts/1', status: 200, ms: 0.5 });
    logger.info({ password: 'p' }, 'after');

    expect(lines[0]).toEqual({
      level: 30,
      time: expect.any(String),
      service: 'test',
      requestId: 'r1',
      method: 'GET',
      path: '/api/posts/1',
      status: 200,
      ms: 0.5,
    });
    expect(lines[1]).toMatchObject({ password: '[redacted]', msg: 'after' });
  });

  it('when an access line is written, then no redaction pass runs on it: its fields are written as given', () => {
    // Why its callers may give it no credential: a field named like one is not censored here.
    const { logger, lines } = capture();

    accessLogger(logger).info({ path: '/api/auth/logout', token: 'not-a-credential' });

    expect(lines[0]).toMatchObject({ path: '/api/auth/logout', token: 'not-a-credential' });
  });
});
