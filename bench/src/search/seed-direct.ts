/**
 * The search benchmark's posts written straight into each system's database, as an import would:
 * through the APIs, 100,000 posts would take ours half an hour (scenario 14 seeds at 60 posts a
 * second) and measure nothing this benchmark is about. Both are written published, by one author,
 * a minute apart, newest last.
 */

import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { withDatabase } from '@cs/mongo';
import { markListingChanged } from '@cs/posts/operations';
import mongoose, { Types } from 'mongoose';
import { corpusPost } from './corpus';

/** Posts written at once. */
const BATCH = 1000;
const EPOCH = Date.UTC(2024, 0, 1);

/** Posts `first` to `first + count - 1` into ours' posts database, then the listing told, as any write around the service must. */
export async function seedOurs(mongoUrl: string, authorId: string, first: number, count: number): Promise<void> {
  const connection = await mongoose.createConnection(withDatabase(mongoUrl, 'posts')).asPromise();
  try {
    const posts = connection.collection('posts');
    for (let from = first; from < first + count; from += BATCH) {
      const docs = [];
      for (let i = from; i < Math.min(from + BATCH, first + count); i++) {
        const { title, body, tags } = corpusPost(i);
        const createdAt = new Date(EPOCH + i * 60_000);
        docs.push({
          _id: new Types.ObjectId(),
          title,
          body,
          tags,
          authorId: new Types.ObjectId(authorId),
          status: 'published',
          publishedAt: createdAt,
          createdAt,
          updatedAt: createdAt,
          version: 0,
        });
      }
      await posts.insertMany(docs, { ordered: false });
    }
    await markListingChanged(connection);
  } finally {
    await connection.close();
  }
}

/** A record id as PocketBase makes them: 15 of [a-z0-9]. */
function pocketBaseId(i: number): string {
  return `s${i.toString(36).padStart(14, '0')}`;
}

/** PocketBase's date format: `2024-01-01 00:00:00.000Z`. */
function pocketBaseDate(ms: number): string {
  return new Date(ms).toISOString().replace('T', ' ');
}

/** The same posts into PocketBase's SQLite database, while it runs (SQLite's own locking keeps it safe). */
export function seedPocketBase(pbDataDir: string, authorId: string, first: number, count: number): void {
  const db = new DatabaseSync(join(pbDataDir, 'data.db'));
  try {
    db.exec('PRAGMA busy_timeout = 10000');
    const insert = db.prepare(
      'INSERT INTO posts (id, title, content, tags, published, author, created, updated) VALUES (?, ?, ?, ?, 1, ?, ?, ?)',
    );
    for (let from = first; from < first + count; from += BATCH) {
      db.exec('BEGIN');
      for (let i = from; i < Math.min(from + BATCH, first + count); i++) {
        const { title, body, tags } = corpusPost(i);
        const at = pocketBaseDate(EPOCH + i * 60_000);
        insert.run(pocketBaseId(i), title, body, JSON.stringify(tags), authorId, at, at);
      }
      db.exec('COMMIT');
    }
  } finally {
    db.close();
  }
}
