/**
 * The one way an upload's object leaves storage: the original, then every thumbnail made of it
 * (`thumbs/<key>/`, thumbnail-key.ts). The release, the sweeper, a deleted account's purge and the
 * claim's refusal of a broken object all delete through here, so no thumbnail outlives its
 * original. The original goes first: a thumbnail being made meanwhile finds it gone after its own
 * write and deletes what it wrote (thumbnails.ts), and one written before the listing is listed.
 * Idempotent, like the delete of one object: a failure midway is simply done again by its caller.
 */
import type { ObjectStorage } from '@cs/storage';
import { thumbnailsOf } from '../thumbnails/thumbnail-key';

export async function deleteUploadObject(storage: ObjectStorage, key: string): Promise<void> {
  await storage.deleteObject(key);
  const prefix = thumbnailsOf(key);
  let after: string | undefined;
  do {
    const { objects, next } = await storage.listObjects(prefix, { after });
    for (const object of objects) await storage.deleteObject(object.key);
    after = next;
  } while (after !== undefined);
}
