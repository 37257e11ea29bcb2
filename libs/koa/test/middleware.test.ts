import { gzipSync } from 'node:zlib';
import { describe, expect, it } from '@jest/globals';
import { testApp } from './app';

describe('the error handler', () => {
  it('when a handler throws something unexpected, then 500 with a generic message; the cause goes only to the log', async () => {
    const { http, logs } = testApp();
    const res = await http.get('/explodes');

    expect(res.status).toBe(500);
    expect(res.body).toEqual({ error: 'Internal server error' });
    expect(res.text).not.toContain('secret internal detail');
    expect(res.text).not.toContain('at ');
    expect(logs.text()).toContain('secret internal detail');
  });

  it('when the route names its operation, then the 500 carries that message and nothing else', async () => {
    const res = await testApp().http.get('/explodes-with-message');

    expect(res.status).toBe(500);
    expect(res.body).toEqual({ error: 'Failed to do the thing' });
  });

  it('when the database cannot be reached, then 503 service-unavailable', async () => {
    const res = await testApp().http.get('/db-away');

    expect(res.status).toBe(503);
    expect(res.body).toEqual({ error: 'Service temporarily unavailable' });
  });

  it('when no route matches, then 404 JSON; a wrong method, then 405 JSON', async () => {
    const { http } = testApp();
    const missing = await http.get('/nothing-here');
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ error: 'Not found' });

    const method = await http.delete('/protected');
    expect(method.status).toBe(405);
    expect(method.body).toEqual({ error: 'Method not allowed' });
  });
});

describe('the JSON body', () => {
  it('when the body is malformed, too large, not JSON, or not an object, then a 4xx with a clear message', async () => {
    const { http } = testApp();
    const cases = [
      [
        await http.post('/validated').set('Content-Type', 'application/json').send('{"name":'),
        400,
        'Malformed JSON body',
      ],
      [await http.post('/validated').send({ name: 'x'.repeat(101 * 1024), age: 1 }), 413, 'Request body too large'],
      [
        await http.post('/validated').set('Content-Type', 'text/plain').send('name=x'),
        415,
        'Content-Type must be application/json',
      ],
      [
        await http.post('/validated').set('Content-Type', 'application/json').send('[]'),
        400,
        'JSON body must be an object',
      ],
      [await http.post('/validated').set('Content-Type', 'application/json').send('null'), 400, 'Malformed JSON body'],
    ] as const;
    for (const [res, status, error] of cases) {
      expect(res.status).toBe(status);
      expect(res.body).toEqual({ error });
    }
  });

  it('when the body says an encoding it is not in, or one we do not take, then 400 or 415; a real gzip body is read', async () => {
    const { http } = testApp();
    const json = JSON.stringify({ name: 'x', age: 1 });
    // Sent as the bytes given: the client library would serialize a Buffer as JSON.
    const send = (encoding: string, body: string | Buffer) =>
      http
        .post('/validated')
        .set('Content-Type', 'application/json')
        .set('Content-Encoding', encoding)
        .serialize((bytes: unknown) => bytes as string)
        .send(body);

    for (const encoding of ['deflate', 'gzip']) {
      const res = await send(encoding, json);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'Request body does not match its Content-Encoding' });
    }
    const unknown = await send('xz', json);
    expect(unknown.status).toBe(415);
    expect(unknown.body).toEqual({ error: 'Content-Encoding must be gzip, deflate or identity' });
    expect((await send('gzip', gzipSync(json))).status).toBe(200);
  });

  it('when the body nests 10,000 levels deep, then 4xx, never a crash', async () => {
    const deep = `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`;
    const res = await testApp().http.post('/validated').set('Content-Type', 'application/json').send(deep);

    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
  });
});

describe('request ids and health', () => {
  it('when the caller sends a safe x-request-id, then it is kept; an unsafe one is replaced', async () => {
    const { http } = testApp();
    expect((await http.get('/healthz').set('x-request-id', 'abc-123')).headers['x-request-id']).toBe('abc-123');
    const replaced = (await http.get('/healthz').set('x-request-id', 'bad id with spaces')).headers['x-request-id'];
    expect(replaced).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('when a readiness check fails, then /readyz is 503 naming it, while /healthz stays 200', async () => {
    const { http } = testApp(false);
    expect((await http.get('/healthz')).status).toBe(200);
    const ready = await http.get('/readyz');
    expect(ready.status).toBe(503);
    expect(ready.body).toEqual({ error: 'Not ready', checks: { database: 'failing', tokens: 'ok' } });
  });
});
