/**
 * A deleted account's uploads: every record of the owner's, whatever its state, goes with its
 * object, and so do the slots it held. Identity calls until it gets a 204, so a failure midway is
 * simply done again: a record goes after its object, and every step is idempotent.
 */
import type { ObjectStorage } from '@cs/storage';
import type { LinkSlots } from '../links/link-slots';
import { deleteUploadObject } from './delete-upload-object';
import type { UploadModel, UploadRecord } from './model';

export function createAccountPurge({
  model,
  storage,
  slots,
  multipartSlots,
}: {
  model: UploadModel;
  storage: ObjectStorage;
  slots: LinkSlots;
  multipartSlots: LinkSlots;
}) {
  /**
   * A multipart upload is aborted first, so no part still coming can be joined after the delete
   * (a completed one has nothing to abort). A worker holding a record meanwhile finds it gone and
   * writes nothing. Objects put through a link and not yet recorded by the sweeper have no owner
   * here: they stay until the sweeper deletes them, UPLOAD_CLAIM_TTL and its margin after their
   * upload (sweeper.ts `sweepUnclaimed`), as it does any unclaimed object; so does an object that a
   * link still valid now puts back later.
   */
  return async function purgeAccount(ownerId: string): Promise<void> {
    await slots.removeAllOf(ownerId);
    await multipartSlots.removeAllOf(ownerId);
    const owned = await model.find({ ownerId }, 'key multipart').lean<Pick<UploadRecord, 'key' | 'multipart'>[]>();
    for (const { key, multipart } of owned) {
      if (multipart) await storage.abortMultipartUpload(key, multipart.storageUploadId);
      await deleteUploadObject(storage, key);
      await model.deleteOne({ key });
    }
  };
}
