import { deletedCaller, tellDeleted } from '@cs/testkit';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { newAuthor, type PostsHarness, seed, startPosts } from './helpers';

let h: PostsHarness;

beforeAll(async () => {
  h = await startPosts(__filename);
});
afterAll(async () => {
  await h.stop();
});

type Author = ReturnType<typeof newAuthor>;
const deleteAccount = (author: Author) => tellDeleted(h.http, author);
const deletedAuthor = () => deletedCaller(h.http);
const postsOf = (author: Author) => h.model.countDocuments({ authorId: author.id });

describe('POST /internal/users/deleted', () => {
  it("when called with the deleted user's token, then 204, a tombstone is recorded, every post of theirs is gone, drafts included, and another user's posts stay", async () => {
    const gone = newAuthor();
    const kept = newAuthor();
    await seed(h.model, [
      { authorId: gone.id, status: 'published' },
      { authorId: gone.id, status: 'draft' },
      { authorId: kept.id, status: 'published' },
      { authorId: kept.id, status: 'draft' },
    ]);

    const res = await deleteAccount(gone);
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect(await postsOf(gone)).toBe(0);
    expect(await postsOf(kept)).toBe(2);
    expect(await h.accounts.isDeleted(gone.id)).toBe(true);
    expect(await h.accounts.isDeleted(kept.id)).toBe(false);
  });

  it('when called again, then 204 and nothing changes', async () => {
    const gone = newAuthor();
    const kept = newAuthor();
    await seed(h.model, [{ authorId: gone.id }, { authorId: kept.id }]);
    await deleteAccount(gone).expect(204);
    const total = await h.model.countDocuments();

    expect((await deleteAccount(gone)).status).toBe(204);
    expect(await h.model.countDocuments()).toBe(total);
    expect(await postsOf(kept)).toBe(1);
  });

  it('when there is no token, then 401 and nothing is deleted', async () => {
    const author = newAuthor();
    await seed(h.model, [{ authorId: author.id }]);

    const res = await h.http.post('/internal/users/deleted');
    expect(res.status).toBe(401);
    expect(await postsOf(author)).toBe(1);
  });
});

describe("a deleted account's token, still valid", () => {
  it('when it creates a post, then 401 invalid-or-expired-token and nothing is written', async () => {
    const author = await deletedAuthor();
    const total = await h.model.countDocuments();

    const res = await h.http
      .post('/api/posts')
      .set(author.auth)
      .send({ title: 'Still here?', body: 'A long enough body.' });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'Invalid or expired token' });
    expect(await h.model.countDocuments()).toBe(total);
  });

  it('when it updates or publishes a post of theirs that the purge never saw, then 401 and the post is unchanged', async () => {
    const author = await deletedAuthor();
    const [id] = await seed(h.model, [{ authorId: author.id, status: 'draft' }]);
    const before = await h.model.findById(id).lean();

    for (const change of [{ title: 'Changed' }, { status: 'published' }]) {
      const res = await h.http.put(`/api/posts/${id}`).set(author.auth).send(change);
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'Invalid or expired token' });
    }
    expect(await h.model.findById(id).lean()).toEqual(before);
  });

  it("when it reads or deletes, then nothing is looked up: another user's published post is 200, its own list 200, a delete 204", async () => {
    const author = await deletedAuthor();
    const [published] = await seed(h.model, [{ authorId: newAuthor().id, status: 'published' }]);
    const [leftover] = await seed(h.model, [{ authorId: author.id, status: 'draft' }]);

    expect((await h.http.get(`/api/posts/${published}`).set(author.auth)).status).toBe(200);
    const mine = await h.http.get('/api/posts/my-posts').set(author.auth);
    expect(mine.status).toBe(200);
    expect(mine.body).toEqual([expect.objectContaining({ _id: leftover })]);
    expect((await h.http.delete(`/api/posts/${leftover}`).set(author.auth)).status).toBe(204);
    expect(await postsOf(author)).toBe(0);
  });
});
