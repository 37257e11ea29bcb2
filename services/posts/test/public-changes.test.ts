import { messages } from '@cs/errors';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { newAuthor, type PostsHarness, seed, startPosts } from './helpers';

let h: PostsHarness;

beforeAll(async () => {
  h = await startPosts(__filename);
});
afterAll(async () => {
  await h.stop();
});

/** The default of PUBLIC_CHANGES_PER_MINUTE. */
const PER_MINUTE = 60;

async function postOf(authorId: string, status: 'draft' | 'published'): Promise<string> {
  const [id] = await seed(h.model, [{ authorId, status, title: 'Flipped', body: 'A post flipped again and again.' }]);
  return id as string;
}

describe('changes to what everyone sees past a post’s first publish, per account (PUBLIC_CHANGES_PER_MINUTE)', () => {
  it('when an account flips its post past the limit, then 429 with Retry-After, and the post stays as it was', async () => {
    const flipper = newAuthor();
    const id = await postOf(flipper.id, 'draft');
    // The first publish is free; the 60 flips after it are counted, and leave it published.
    for (let i = 0; i <= PER_MINUTE; i++) {
      const status = i % 2 === 0 ? 'published' : 'draft';
      const res = await h.http.put(`/api/posts/${id}`).set(flipper.auth).send({ status });
      expect(res.status).toBe(200);
    }
    const refused = await h.http.put(`/api/posts/${id}`).set(flipper.auth).send({ status: 'draft' });

    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ error: messages.tooManyRequests });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect((await h.model.findById(id).lean())?.status).toBe('published');

    // Editing a published post counts as well, and so does publishing again a post unpublished.
    const unpublished = await postOf(flipper.id, 'published');
    await h.model.updateOne({ _id: unpublished }, { $set: { status: 'draft' } });
    const again = await h.http.put(`/api/posts/${unpublished}`).set(flipper.auth).send({ status: 'published' });
    expect(again.status).toBe(429);
    const published = await postOf(flipper.id, 'published');
    const edit = await h.http.put(`/api/posts/${published}`).set(flipper.auth).send({ title: 'Edited' });
    expect(edit.status).toBe(429);
  });

  it('when edits of one published post race, then each is counted once, however often it lost its turn', async () => {
    const editor = newAuthor();
    const id = await postOf(editor.id, 'published');
    const racing = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        h.http
          .put(`/api/posts/${id}`)
          .set(editor.auth)
          .send({ title: `Race ${i}` }),
      ),
    );
    expect(racing.map((res) => res.status)).toEqual(Array(8).fill(200));
    for (let i = 8; i < PER_MINUTE; i++) {
      const res = await h.http
        .put(`/api/posts/${id}`)
        .set(editor.auth)
        .send({ title: `Edit ${i}` });
      expect(res.status).toBe(200);
    }

    expect((await h.http.put(`/api/posts/${id}`).set(editor.auth).send({ title: 'One more' })).status).toBe(429);
  });

  it('when an account edits its drafts past the limit, then every edit is made: drafts are not counted', async () => {
    const writer = newAuthor();
    const id = await postOf(writer.id, 'draft');
    for (let i = 0; i <= PER_MINUTE; i++) {
      const res = await h.http
        .put(`/api/posts/${id}`)
        .set(writer.auth)
        .send({ title: `Draft ${i}` });
      expect(res.status).toBe(200);
    }
  });

  it('when one account publishes 300 new posts in a minute, then every publish is made: a post’s first publish is not counted', async () => {
    const publisher = newAuthor();
    const statuses: number[] = [];
    for (let batch = 0; batch < 30; batch++) {
      const answers = await Promise.all(
        Array.from({ length: 10 }, async (_, i) => {
          const created = await h.http
            .post('/api/posts')
            .set(publisher.auth)
            .send({ title: `Imported ${batch}-${i}`, body: 'A post brought in by an import.' })
            .expect(201);
          return h.http.put(`/api/posts/${created.body._id}`).set(publisher.auth).send({ status: 'published' });
        }),
      );
      statuses.push(...answers.map((res) => res.status));
    }

    expect(statuses).toEqual(Array(300).fill(200));
    expect(await h.model.countDocuments({ authorId: publisher.id, status: 'published' })).toBe(300);
    // The account's repeat changes are still counted from the first.
    const [first] = await seed(h.model, [{ authorId: publisher.id, status: 'published' }]);
    for (let i = 0; i < PER_MINUTE; i++) {
      await h.http
        .put(`/api/posts/${first}`)
        .set(publisher.auth)
        .send({ title: `Fix ${i}` })
        .expect(200);
    }
    expect((await h.http.put(`/api/posts/${first}`).set(publisher.auth).send({ title: 'One more' })).status).toBe(429);
  });

  it('when one account is past the limit, then another account publishes as usual', async () => {
    const flipper = newAuthor();
    const bystander = newAuthor();
    const id = await postOf(flipper.id, 'published');
    for (let i = 0; i < PER_MINUTE; i++) {
      await h.http
        .put(`/api/posts/${id}`)
        .set(flipper.auth)
        .send({ title: `Edit ${i}` });
    }
    expect((await h.http.put(`/api/posts/${id}`).set(flipper.auth).send({ title: 'One more' })).status).toBe(429);

    const theirs = await postOf(bystander.id, 'draft');
    const res = await h.http.put(`/api/posts/${theirs}`).set(bystander.auth).send({ status: 'published' });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('published');
  });
});
