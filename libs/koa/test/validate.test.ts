import { describe, expect, it } from '@jest/globals';
import { testApp } from './app';

describe('validateParam', () => {
  it('when the id matches its schema, then the route runs', async () => {
    const res = await testApp().http.get('/things/0123456789ABCDEF01234567');

    expect(res.status).toBe(200);
  });

  it.each([
    '123',
    '0123456789abcdef0123456',
    '0123456789abcdef012345678',
    'g123456789abcdef01234567',
    'aaaaaaaaaaaa',
    '%00',
  ])('when the id is %j, then the schema’s status and message: 400 invalid-ID-format', async (id) => {
    const res = await testApp().http.get(`/things/${id}`);

    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'Invalid ID format' });
  });
});

describe('validateBody, the validation step', () => {
  it('when every rule passes, then unknown fields are removed before the handler', async () => {
    const res = await testApp().http.post('/validated').send({ name: 'Ada', age: 36, admin: true, __proto__x: 1 });

    expect(res.status).toBe(200);
    expect(res.body).toEqual({ name: 'Ada', age: 36 });
  });

  it('when rules fail, then 400 {errors: [{field, message}]}, one entry a field, with the schema’s messages', async () => {
    const res = await testApp().http.post('/validated').send({ age: -1 });

    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      errors: [
        { field: 'name', message: 'name is required' },
        { field: 'age', message: 'age cannot be negative' },
      ],
    });
  });

  it('when a field fails a rule with no message of its own, then its default message is used', async () => {
    const res = await testApp().http.post('/validated').send({ name: 'x', age: 1.5 });

    expect(res.body).toEqual({ errors: [{ field: 'age', message: 'age must be a whole number' }] });
  });
});

describe('validateBody, when the schema says x-error', () => {
  const answer = async (body: object) => {
    const res = await testApp().http.post('/answered').send(body);
    expect(res.status).toBe(422);
    return res.body;
  };

  it('when every rule passes, then the handler runs with the body', async () => {
    const res = await testApp().http.post('/answered').send({ email: 'a@b', password: 'long enough' });

    expect(res.status).toBe(200);
    expect(res.body).toEqual({ email: 'a@b', password: 'long enough' });
  });

  it('when a field is missing, or null, or "", then the missing-field message, before any other', async () => {
    for (const body of [{ password: 5 }, { email: null, password: 'long enough' }, { email: '', tag: 'x' }]) {
      expect(await answer(body)).toMatchObject({ error: 'email is required' });
    }
  });

  it('when the root gives a message for the rule, then it comes before a field’s own', async () => {
    expect(await answer({ email: 'nope', password: 5 })).toMatchObject({ error: 'fields must be strings' });
  });

  it('when only field rules fail, then the first field’s message, from the subschema nearest the rule', async () => {
    expect(await answer({ email: '   ', password: 'short' })).toMatchObject({ error: 'email is required' });
    expect(await answer({ email: 'nope', password: 'short' })).toMatchObject({ error: 'email must be an address' });
    expect(await answer({ email: 'a@b', password: 'short' })).toMatchObject({ error: 'password is too short' });
  });

  it('when several fields fail, then beside the first message every field’s own, one entry a field, for a form to mark each', async () => {
    expect(await answer({ email: 'nope', password: 'short' })).toEqual({
      error: 'email must be an address',
      errors: [
        { field: 'email', message: 'email must be an address' },
        { field: 'password', message: 'password is too short' },
      ],
    });
    expect(await answer({ email: 'a@b', password: 'short' })).toEqual({
      error: 'password is too short',
      errors: [{ field: 'password', message: 'password is too short' }],
    });
  });

  it('when a string is longer in UTF-8 bytes than x-maxBytes, then its message', async () => {
    expect(await answer({ email: 'a@b', password: '€€€€€€€€' })).toMatchObject({ error: 'password is too long' });
    expect((await testApp().http.post('/answered').send({ email: 'a@b', password: '€€123456' })).status).toBe(200);
  });

  it('when the only fields are unknown ones, then they are removed first and the body has none', async () => {
    const { http } = testApp();
    const empty = await http.patch('/changes').send({ tags: ['x'], authorId: 'someone' });
    expect(empty.status).toBe(400);
    expect(empty.body).toMatchObject({ error: 'nothing to change' });

    const kept = await http.patch('/changes').send({ title: 'x', authorId: 'someone' });
    expect(kept.body).toEqual({ title: 'x' });
  });
});

describe('validateQuery', () => {
  it('when the query matches its schema, then the handler runs with the query as sent, unknown parameters too', async () => {
    const res = await testApp().http.get('/search?q=ada&page=2&sort=new');

    expect(res.status).toBe(200);
    expect(res.body).toEqual({ q: 'ada', page: '2', sort: 'new' });
  });

  it.each([
    ['q is missing', 'page=2', 'q is required, once'],
    ['q is given twice', 'q=a&q=b', 'q is required, once'],
    ['page breaks its pattern', 'q=a&page=two', 'page must be a number'],
    ['page is empty', 'q=a&page=', 'page must be a number'],
    ['both fail', 'page=two', 'q is required, once'],
  ])('when %s (?%s), then the schema’s status and its first message alone, {error}', async (_, query, message) => {
    const res = await testApp().http.get(`/search?${query}`);

    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: message });
  });
});

describe('noBody', () => {
  it('when a body is sent anyway, then it is ignored', async () => {
    const res = await testApp().http.post('/nothing').send({ anything: 1 });

    expect(res.status).toBe(200);
    expect(res.body).toEqual({});
  });
});
