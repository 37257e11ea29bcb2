/**
 * Reading upload records, and writing one as its next version. Every state change of a record is
 * taken as a turn (`@cs/mongo` turns), so one claim, completion, release or sweeper replica ever
 * acts on a version of it, on FerretDB as on MongoDB.
 */
import { HttpError } from '@cs/errors';
import type { Turns } from '@cs/mongo';
import { messages } from '../messages';
import type { UploadModel, UploadRecord } from './model';

/** A record as read, and when: its next version must be taken within the turns' hold time. */
export type Read = UploadRecord & { readAt: number };

export function createRecords(model: UploadModel, turns: Turns) {
  async function readWith(filter: Record<string, string>): Promise<Read | undefined> {
    const readAt = Date.now();
    const record = await model.findOne(filter).lean<UploadRecord>();
    return record ? { ...record, readAt } : undefined;
  }

  const read = (key: string) => readWith({ key });

  return {
    read,

    /** The caller's record of `key`; anyone else's, or none, is the same 404. */
    async owned(ownerId: string, key: string): Promise<Read> {
      const record = await read(key);
      if (!record || record.ownerId !== ownerId) throw new HttpError(404, messages.uploadNotFound);
      return record;
    },

    /** The caller's multipart upload `id`, released ones included; anyone else's is a 404. */
    async ownedMultipart(
      ownerId: string,
      id: string,
    ): Promise<Read & { multipart: NonNullable<UploadRecord['multipart']> }> {
      const record = await readWith({ 'multipart.id': id });
      if (!record?.multipart || record.ownerId !== ownerId) throw new HttpError(404, messages.uploadNotFound);
      return record as Read & { multipart: NonNullable<UploadRecord['multipart']> };
    },

    /**
     * Writes `changes` as the record's next version if this caller gets that turn; otherwise
     * another claim, release or sweeper replica got there first, and nothing is written.
     */
    async advance(record: Read, changes: Partial<UploadRecord>): Promise<Read | undefined> {
      const done = await turns.advance(
        `upload:${record.key}`,
        record.version ?? 0,
        record.readAt,
        async (version) => {
          const filter = { key: record.key, version: record.version ?? null };
          const { matchedCount } = await model.updateOne(filter, { $set: { ...changes, version } });
          return matchedCount > 0 ? true : null;
        },
        async () => (await read(record.key))?.version ?? 0,
      );
      return done && { ...record, ...changes, version: done.version, readAt: Date.now() };
    },
  };
}

export type Records = ReturnType<typeof createRecords>;
