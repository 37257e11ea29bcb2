/** The path parameters of the public routes: a record's id, a multipart upload's id. */
import { messages as httpMessages } from '@cs/errors';
import { OBJECT_ID_PATTERN, UPLOAD_ID_PATTERN } from '../limits';
import { fileMessages } from '../messages';

export const objectIdParamSchema = {
  type: 'string',
  pattern: OBJECT_ID_PATTERN,
  'x-error': { status: 400 },
  'x-messages': httpMessages.invalidId,
} as const;

/** Anything that cannot be an upload's id is the same 404 as an unknown one. */
export const uploadIdParamSchema = {
  type: 'string',
  pattern: UPLOAD_ID_PATTERN,
  'x-error': { status: 404 },
  'x-messages': fileMessages.uploadNotFound,
} as const;
