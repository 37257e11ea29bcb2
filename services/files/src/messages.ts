/**
 * What the files service says to its callers. The request schemas, their limits and the messages
 * of their rules are the OpenAPI document's own (`@cs/contract`); these are the operations' own.
 */
import { fileMessages } from '@cs/contract';

export const messages = {
  ...fileMessages,
  /** The allowlist is configured (UPLOAD_ALLOWED_TYPES), so it is checked after the schema. */
  typeNotAllowed: (allowed: readonly string[]) => `contentType must be one of: ${allowed.join(', ')}`,
  tooManyOpenLinks: (max: number) =>
    `At most ${max} upload links without a size may be open at once; wait for one to expire, or send size`,
  tooManyOpenMultipart: (max: number) =>
    `At most ${max} multipart uploads may be open at once; complete or abort one first`,
  /** Over the account's bound on uploads not yet attached (unclaimed-budget.ts). */
  tooMuchUnclaimed: (count: number, bytes: number) =>
    `At most ${count} uploads and ${bytes} bytes not yet attached to a note may be held at once; attach or abort some first`,
  /** A size-less link's object, at the claim or at the check after its link expired. */
  tooLarge: 'The uploaded file is larger than the upload limit; it was removed',
  wrongType: 'The uploaded file is not of the content type the link was issued for; it was removed',
  /** The stored object is not the size declared when its link was issued. */
  wrongSize: 'The uploaded file is not the size that was declared; it was removed',
  partOutOfRange: (partCount: number) => `partNumbers must be between 1 and ${partCount} for this upload`,
  partsMissing: (missing: readonly number[]) =>
    `Parts not uploaded yet: ${missing.slice(0, 10).join(', ')}${missing.length > 10 ? ` and ${missing.length - 10} more` : ''}`,
  partsMismatch: 'The uploaded parts do not add up to the declared size',
  uploadCompleted: 'This upload is already completed',
  claimExpired: 'The file was uploaded too long ago to be attached; upload it again',
  uploadAttached: 'This upload is attached to a note; delete the note to remove it',
  uploadBusy: 'This upload is being changed by another request; try again',
  notUploaded: 'The file has not been uploaded yet',
  notClaimable: 'This upload cannot be attached (already attached or removed)',
  /** Thumbnails (thumbnails/): the sizes and types are configured, so the messages name them. */
  thumbSizeNotAllowed: (allowed: readonly string[]) => `thumb must be one of: ${allowed.join(', ')}`,
  thumbTypeNotAllowed: (types: readonly string[]) => `Thumbnails are made only of images of type ${types.join(', ')}`,
  thumbnailTooLarge: (maxPixels: number) => `The image is larger than ${maxPixels} pixels; no thumbnail is made of it`,
  thumbnailUnreadable: 'The image cannot be read (corrupt or truncated); no thumbnail is made of it',
  thumbnailFileTooLarge: (maxBytes: number) => `The file is larger than ${maxBytes} bytes; no thumbnail is made of it`,
  uploadUrlFailed: 'Failed to create upload URL',
  multipartFailed: 'Failed to handle the multipart upload',
} as const;
