export type { Page } from './calls.js';
export { type ClientOptions, type ContentClient, createContentClient } from './client.js';
export {
  ApiError,
  ContentClientError,
  type ErrorKind,
  type FieldError,
  NetworkError,
  SessionExpiredError,
  SignInError,
  StorageError,
  UploadAbortedError,
} from './errors.js';
export type { Account, Identity, SessionInfo } from './identity.js';
export type { DownloadLink, NewNote, Note, NoteChanges } from './notes.js';
export type {
  ListPostsOptions,
  MyPostsOptions,
  NewPost,
  Post,
  PostChanges,
  PostPage,
  PostPatch,
  PostSort,
} from './posts.js';
export type { components, paths } from './schema.js';
export { memoryStore, type Session, type SessionStore, webStorage } from './session.js';
export type { Provider } from './sign-in.js';
export type {
  SubscribeOptions,
  SubscriptionHandlers,
  SubscriptionStatus,
  Topic,
  TopicDocuments,
  TopicHandlers,
} from './subscribe.js';
export { MULTIPART_FROM } from './upload.js';
export type { UnfinishedUpload, UploadOptions, UploadTask } from './upload-types.js';
