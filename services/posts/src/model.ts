import { modelOf } from '@cs/mongo';
import { type OutboxEntry, withOutboxFields } from '@cs/outbox';
import { type Connection, type Model, Schema, type Types } from 'mongoose';
import { type PostStatus, STATUSES } from './terms';

export interface PostRecord {
  _id: Types.ObjectId;
  title: string;
  body: string;
  authorId: Types.ObjectId;
  status: PostStatus;
  tags: string[];
  publishedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
  /** Every update is the post's next version, taken as a turn (see posts.ts). */
  version?: number;
}

/** A post as the API returns it. */
export interface Post {
  _id: string;
  title: string;
  body: string;
  authorId: string;
  status: PostStatus;
  tags: string[];
  publishedAt: string | null;
  createdAt: string;
  updatedAt: string;
}

/**
 * Lengths and formats are checked before anything is written, by the request schemas
 * (`@cs/contract`) and post-input.ts, which count characters as JSON Schema does: they are the one
 * source of truth, so the model does not count again (in UTF-16 units, as it would).
 */
const postSchema = new Schema<PostRecord>(
  {
    title: { type: String, required: true, trim: true },
    body: { type: String, required: true, trim: true },
    authorId: { type: Schema.Types.ObjectId, required: true, immutable: true },
    status: { type: String, enum: STATUSES, required: true, default: 'draft' },
    tags: { type: [String], default: [] },
    publishedAt: { type: Date, default: null },
    version: { type: Number, default: 0 },
  },
  { timestamps: true, versionKey: false, strict: 'throw' },
);

/**
 * One index per query shape: equality fields first, then the sort (newest first, _id breaking
 * ties so pages never overlap). `index-coverage.test.ts` checks every query against this list.
 */
export const POST_INDEXES = [
  { status: 1, createdAt: -1, _id: -1 }, // public list
  { status: 1, tags: 1, createdAt: -1, _id: -1 }, // public list by tag
  { authorId: 1, createdAt: -1, _id: -1 }, // my-posts
] as const;
for (const keys of POST_INDEXES) postSchema.index({ ...keys });

export type PostModel = Model<PostRecord>;

export function postModel(connection: Connection): PostModel {
  return modelOf(connection, 'Post', postSchema);
}

/** The fields a response carries; list and read queries project exactly these. */
export const POST_FIELDS = '_id title body authorId status tags publishedAt createdAt updatedAt';

export function toPost(record: PostRecord): Post {
  return {
    _id: record._id.toHexString(),
    title: record.title,
    body: record.body,
    authorId: record.authorId.toHexString(),
    status: record.status,
    tags: record.tags,
    publishedAt: record.publishedAt ? record.publishedAt.toISOString() : null,
    createdAt: record.createdAt.toISOString(),
    updatedAt: record.updatedAt.toISOString(),
  };
}

/**
 * A change event the posts service owes the bus (post-events.ts), written before its write: an
 * outbox entry of `@cs/outbox`. `_id` names the write (`<postId>:v<version>`, or `<postId>:gone`),
 * so writing it twice keeps one.
 */
export interface PostEventRecord extends OutboxEntry {
  _id: string;
  postId: string;
  authorId: string;
  /** The post's version once the write lands; null for a deletion. */
  version: number | null;
  /** The post was published before the write. */
  wasPublished: boolean;
  /** The write leaves it published. */
  publishes: boolean;
  /** Its tags before the write: a deleted post's removal goes to its tags' subscribers. */
  tagsBefore: string[];
}

const postEventSchema = withOutboxFields(
  new Schema<PostEventRecord>(
    {
      _id: { type: String, required: true },
      postId: { type: String, required: true },
      authorId: { type: String, required: true },
      version: { type: Number, default: null },
      wasPublished: { type: Boolean, required: true },
      publishes: { type: Boolean, required: true },
      tagsBefore: { type: [String], default: [] },
    },
    { versionKey: false, strict: 'throw', collection: 'post_events' },
  ),
);

export type PostEventModel = Model<PostEventRecord>;

export function postEventModel(connection: Connection): PostEventModel {
  return modelOf(connection, 'PostEvent', postEventSchema);
}
