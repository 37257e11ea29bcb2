/**
 * What a request that breaks a rule of its schema is told, in the contract's words. The request
 * schemas carry these (`x-messages`), and a service that checks a rule of its own after the schema
 * (one that depends on its configuration) says it with the same words.
 */
import { TOPICS } from './events';
import { LIMITS } from './limits';

export const requestMessages = {
  nul: (field: string) => `${field} must not contain the character U+0000`,
} as const;

export const searchMessages = {
  tooLong: `q must be at most ${LIMITS.searchQueryMax} characters and ${LIMITS.searchWordsMax} words`,
} as const;

export const credentialMessages = {
  required: 'Email and password are required',
  notStrings: 'Email and password must be strings',
  badEmail: `Email must be a valid address of at most ${LIMITS.emailMax} characters`,
  shortPassword: `Password must be at least ${LIMITS.passwordMin} characters`,
  longPassword: `Password must be at most ${LIMITS.passwordMaxBytes} bytes`,
  passwordChangeRequired: 'currentPassword and newPassword are required',
  passwordChangeNotStrings: 'currentPassword and newPassword must be strings',
  passwordRequired: 'Password is required',
  passwordNotString: 'Password must be a string',
  emailRequired: 'Email is required',
  emailNotString: 'Email must be a string',
  resetRequired: 'token and newPassword are required',
  resetNotStrings: 'token and newPassword must be strings',
  refreshTokenRequired: 'refreshToken is required',
  refreshTokenNotString: 'refreshToken must be a string',
  displayNameInvalid: `displayName must be 1 to ${LIMITS.displayNameMax} characters once trimmed, with no control or formatting characters`,
  displayNameRequired: 'displayName is required: a name, or null to remove it',
} as const;

export const postMessages = {
  titleRequired: 'title is required',
  titleNotString: 'title must be a string',
  titleTooLong: `title must be at most ${LIMITS.postTitleMax} characters`,
  bodyNotString: 'body must be a string',
  bodyTooShort: `body must be at least ${LIMITS.postBodyMin} characters`,
  bodyTooLong: `body must be at most ${LIMITS.postBodyMax} characters`,
  tagsInvalid: `tags must be a list of at most ${LIMITS.postTagsMax} tags of 1 to ${LIMITS.tagMax} letters, digits or hyphens`,
  noSupportedFields: 'No supported fields to update (title, body, status)',
  noPatchFields: 'No supported fields to update (title, body, status, tags)',
  invalidStatus: 'Invalid status: must be draft or published',
} as const;

export const noteMessages = {
  titleRequired: `title is required and must be 1 to ${LIMITS.noteTitleMax} characters`,
  bodyInvalid: `body must be a string of at most ${LIMITS.noteBodyMax} characters`,
  attachmentKeyInvalid: 'attachmentKey must be an upload key from /upload-url, or null',
  noSupportedFields: 'No supported fields to update (title, body, attachmentKey)',
} as const;

export const fileMessages = {
  contentTypeAndFilenameRequired: 'contentType and filename are required strings',
  filenameTooLong: `filename must be at most ${LIMITS.filenameMax} characters`,
  /** Also for a size over the configured limit, which the files service checks after the schema. */
  badSize: 'size must be a positive integer no larger than the upload limit',
  badPartNumbers: `partNumbers must be an array of 1 to ${LIMITS.partsPerSigning} positive integers`,
  keyRequired: 'key must be an upload key issued by /upload-url',
  thumbSizeRequired: 'size must be a thumbnail size, such as 100x100',
  uploadNotFound: 'Upload not found',
} as const;

const TOPIC_LIST = TOPICS.join(', ');

/** What a stream's query (`GET /api/realtime`) is told; a query parameter given twice is not a string. */
export const topicMessages = {
  topicsRequired: `topics is required: a comma-separated list of ${TOPIC_LIST}`,
  unknownTopic: (name: string) => `Unknown topic "${name.slice(0, 50)}": topics are ${TOPIC_LIST}`,
  badTag: `tag must be 1 to ${LIMITS.tagMax} letters, digits or hyphens`,
  tagWithoutPosts: 'tag filters the posts topic: ask for posts too',
  ticketNotOne: 'ticket must be given once',
  lastEventIdNotOne: 'lastEventId must be given once',
} as const;
