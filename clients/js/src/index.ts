export {
  type Account,
  type ClientOptions,
  type ContentClient,
  createContentClient,
  type DownloadLink,
  type ListPostsOptions,
  type NewNote,
  type NewPost,
  type Note,
  type NoteChanges,
  type Page,
  type Post,
  type PostChanges,
  type PostPage,
  type PostPatch,
  type PostSort,
  type SessionInfo,
} from './client.js';
export {
  ApiError,
  ContentClientError,
  type ErrorKind,
  type FieldError,
  NetworkError,
  SessionExpiredError,
  StorageError,
  UploadAbortedError,
} from './errors.js';
export type { components, paths } from './schema.js';
export { memoryStore, type Session, type SessionStore, webStorage } from './session.js';
export type {
  SubscribeOptions,
  SubscriptionHandlers,
  SubscriptionStatus,
  Topic,
  TopicDocuments,
  TopicHandlers,
} from './subscribe.js';
export { MULTIPART_FROM, type UnfinishedUpload, type UploadOptions, type UploadTask } from './upload.js';
