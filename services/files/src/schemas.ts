/** Request bodies of the files service, checked by hand where the contract wants `{error}`. */
export const FILENAME_MAX = 1024;

export const messages = {
  contentTypeAndFilenameRequired: 'contentType and filename are required strings',
  filenameTooLong: `filename must be at most ${FILENAME_MAX} characters`,
  typeNotAllowed: 'contentType is not an allowed media type',
  badSize: 'size must be a positive integer no larger than the upload limit',
  keyRequired: 'key must be an upload key issued by /upload-url',
  uploadNotFound: 'Upload not found',
  notUploaded: 'The file has not been uploaded yet',
  notClaimable: 'This upload cannot be attached (already attached or removed)',
  uploadUrlFailed: 'Failed to create upload URL',
} as const;
