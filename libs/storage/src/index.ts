export { attachmentDisposition } from './content-disposition';
export type { StoredPart } from './multipart';
export { ObjectStorage } from './object-storage';
export type { ListedObject, ObjectInfo } from './objects';
export type { StorageSettings } from './s3-client';
export { DOWNLOAD_CACHE_CONTROL, type SignedLink } from './signed-links';
export { mapStorageError, storageMessages } from './storage-errors';
