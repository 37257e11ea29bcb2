import { markListingChanged } from '@cs/posts/operations';
import mongoose, { Types } from 'mongoose';
import { ATTACK_POSTS, TAGS } from './settings';

/** ATTACK_POSTS published posts, written straight to the database, and the listing told. */
export async function seedPosts(mongoUrl: string): Promise<{ readId: string; tagTotals: number[] }> {
  const db = await mongoose.createConnection(mongoUrl).asPromise();
  try {
    const author = new Types.ObjectId();
    const now = Date.now();
    const tagTotals = TAGS.map(() => 0);
    let readId = '';
    for (let first = 0; first < ATTACK_POSTS; first += 1000) {
      const batch = Array.from({ length: Math.min(1000, ATTACK_POSTS - first) }, (_, j) => {
        const i = first + j;
        const at = new Date(now - (i + 1) * 1000);
        const t = i % TAGS.length;
        tagTotals[t] = (tagTotals[t] ?? 0) + 1;
        return {
          _id: new Types.ObjectId(),
          title: `Seeded post ${i}`,
          body: 'A body of a realistic length for a short post in the list. '.repeat(3),
          authorId: author,
          status: 'published',
          tags: [TAGS[t]],
          publishedAt: at,
          createdAt: at,
          updatedAt: at,
          version: 0,
        };
      });
      if (!readId) readId = batch[Math.floor(batch.length / 2)]?._id.toHexString() ?? '';
      await db.collection('posts').insertMany(batch);
    }
    await markListingChanged(db);
    return { readId, tagTotals };
  } finally {
    await db.close();
  }
}
