/** The operations of the `files` tag: upload rules and links, one PUT or in parts. */
import { EXAMPLE_FILE_BYTES, EXAMPLE_LARGE_FILE_BYTES } from './examples';
import { alsoServedAt, operation } from './operation';
import { ref } from './responses';

export const filesPaths = {
  '/api/upload-rules': {
    get: operation({
      id: 'uploadRules',
      summary: 'Get the rules an upload must meet',
      description: 'The allowed media types and the size limits.',
      tag: 'files',
      auth: 'none',
      ok: { status: 200, description: 'The rules every upload link is issued under.', schema: ref('UploadRules') },
    }),
  },
  '/upload-url': {
    post: operation({
      id: 'uploadUrl',
      summary: 'Get a signed link to upload one file with one PUT',
      description: `A signed link for one PUT of a file straight to storage, valid for 300 s.\n\n${alsoServedAt('/api/upload-url')}`,
      tag: 'files',
      auth: 'required',
      body: ref('UploadRequest'),
      example: { contentType: 'text/plain', filename: 'shopping-list.txt', size: EXAMPLE_FILE_BYTES },
      ok: {
        status: 200,
        description: 'The link, the key, and the exact headers to send with the PUT.',
        schema: ref('UploadLink'),
      },
    }),
  },
  '/api/multipart-uploads': {
    post: operation({
      id: 'createMultipartUpload',
      summary: 'Start uploading a large file in parts',
      description: `Start a file in parts (straight to storage). The answer says the part size to use and how many parts there are.\n\n${alsoServedAt('/multipart-uploads')}`,
      tag: 'files',
      auth: 'required',
      body: ref('MultipartRequest'),
      example: { contentType: 'application/zip', filename: 'photos.zip', size: EXAMPLE_LARGE_FILE_BYTES },
      ok: { status: 201, description: 'The upload.', schema: ref('MultipartUpload') },
    }),
  },
  '/api/multipart-uploads/{uploadId}': {
    get: operation({
      id: 'getMultipartUpload',
      summary: 'Get a multipart upload and the parts storage holds',
      description: `The upload and the parts storage already holds, to resume.\n\n${alsoServedAt('/multipart-uploads/{uploadId}')}`,
      tag: 'files',
      auth: 'required',
      uploadId: true,
      ok: { status: 200, description: 'The upload, with `parts`.', schema: ref('MultipartUpload') },
    }),
    delete: operation({
      id: 'abortMultipartUpload',
      summary: 'Abort a multipart upload',
      description: `Storage keeps none of its parts. 409 once it is attached to a note.\n\n${alsoServedAt('/multipart-uploads/{uploadId}')}`,
      tag: 'files',
      auth: 'required',
      uploadId: true,
      ok: { status: 204, description: 'Aborted (or already gone).' },
      errors: ['Conflict'],
    }),
  },
  '/api/multipart-uploads/{uploadId}/part-urls': {
    post: operation({
      id: 'signUploadParts',
      summary: 'Get signed PUT links for parts of an upload',
      description: `Each with its exact Content-Length signed in (valid 300 s).\n\n${alsoServedAt('/multipart-uploads/{uploadId}/part-urls')}`,
      tag: 'files',
      auth: 'required',
      uploadId: true,
      body: ref('PartNumbers'),
      example: { partNumbers: [1] },
      ok: { status: 200, description: 'A link per part.', schema: ref('PartLinks') },
      errors: ['Conflict'],
    }),
  },
  '/api/multipart-uploads/{uploadId}/complete': {
    post: operation({
      id: 'completeMultipartUpload',
      summary: 'Join the parts of an upload into one file',
      description: `Once storage holds exactly parts 1…partCount of their lengths; then attach the key to a note.\n\n${alsoServedAt('/multipart-uploads/{uploadId}/complete')}`,
      tag: 'files',
      auth: 'required',
      uploadId: true,
      ok: { status: 200, description: 'The object’s key and size.', schema: ref('CompletedUpload') },
      errors: ['Conflict'],
    }),
  },
} as const;
