/**
 * The OpenAPI 3.1 document of every public route of the gateway: request and response schemas,
 * every status code with its error shape, and the bearer security scheme. The gateway serves it
 * at /openapi.json; the test suites check every response they receive against it.
 */
import { authPaths } from './openapi/auth';
import { emailPaths, emailResponses, emailSchemas, withVerifiedEmailRule } from './openapi/email';
import { TRY_IT_DESCRIPTION } from './openapi/examples';
import { filesPaths } from './openapi/files';
import { healthPaths } from './openapi/health';
import { notesPaths } from './openapi/notes';
import { oidcPaths, oidcSchemas } from './openapi/oidc';
import { postsPaths } from './openapi/posts';
import { realtimePaths } from './openapi/realtime';
import { errorResponses } from './openapi/responses';
import * as s from './schemas';

export const API_VERSION = '1.0.0';

export const openApiDocument = {
  openapi: '3.1.0',
  info: {
    title: 'Content service API',
    version: API_VERSION,
    description:
      'Accounts and login with signed tokens, posts, notes, and time-limited links for direct upload to and download from object storage. Errors are `{error}`; the validation step answers `{errors: [{field, message}]}`. Bodies are JSON, at most 100 kB.\n\n' +
      'Sessions: register and login answer a session, `{token, refreshToken, expiresIn}`. The access token is the contract’s JWT (`id`, `iat`, `exp`), verified without a database read; `POST /api/auth/refresh` spends the refresh token for the next pair (the same token again within 10 s answers the same pair; later, it ends the session as stolen). Logout, ending a session, logging out everywhere, a new password and deleting the account revoke access tokens too: every gateway and service refuses them within about a second. A client that never calls these sees the contract’s tokens, valid until they expire. A web page on this origin can keep the refresh token in an HttpOnly cookie instead (`X-Refresh-Token: cookie`).\n\n' +
      'Each route is documented once: `/upload-url` and `/notes/{id}/attachment` at the contract’s own paths, every other route under `/api`. The routes of files and attachments are also served under the other prefix (`/api/upload-url`, `/multipart-uploads`…), as their descriptions say.\n\n' +
      TRY_IT_DESCRIPTION,
  },
  servers: [{ url: '/' }],
  tags: [
    {
      name: 'auth',
      description: 'Register, log in, refresh and end sessions, change or reset a password, delete an account.',
    },
    { name: 'posts', description: 'Posts: drafts, publishing, the public list.' },
    { name: 'notes', description: 'Notes owned by a user, with an optional attachment.' },
    { name: 'files', description: 'Signed upload links: one PUT, or a large file in parts.' },
    {
      name: 'realtime',
      description: 'Changes of posts and notes pushed as Server-Sent Events, resumable with Last-Event-ID.',
    },
    { name: 'health', description: 'Liveness and readiness.' },
  ],
  paths: withVerifiedEmailRule({
    ...authPaths,
    ...oidcPaths,
    ...emailPaths,
    ...postsPaths,
    ...notesPaths,
    ...filesPaths,
    ...realtimePaths,
    ...healthPaths,
  }),
  components: {
    securitySchemes: {
      bearerAuth: {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'JWT',
        description: 'HS256; the only custom claim is `id`.',
      },
    },
    schemas: {
      Credentials: s.credentialsSchema,
      Login: s.loginSchema,
      ChangePassword: s.changePasswordSchema,
      DeleteAccount: s.deleteAccountSchema,
      PasswordResetRequest: s.passwordResetRequestSchema,
      PasswordResetConfirm: s.passwordResetConfirmSchema,
      Accepted: s.acceptedSchema,
      ...emailSchemas,
      CreatePost: s.createPostSchema,
      UpdatePost: s.updatePostSchema,
      PostTags: s.postTagsSchema,
      PatchPost: s.patchPostSchema,
      CreateNote: s.createNoteSchema,
      UpdateNote: s.updateNoteSchema,
      UploadRequest: s.uploadRequestSchema,
      UploadRules: s.uploadRulesSchema,
      UpdateMe: s.updateMeSchema,
      PublicUsers: s.publicUsersSchema,
      MultipartRequest: s.multipartRequestSchema,
      Error: s.errorSchema,
      ValidationErrors: s.validationErrorsSchema,
      SessionTokens: s.sessionTokensSchema,
      CookieSessionTokens: s.cookieSessionTokensSchema,
      RefreshToken: s.refreshTokenBodySchema,
      Logout: s.logoutBodySchema,
      Session: s.sessionSchema,
      SessionList: s.sessionListSchema,
      Me: s.meSchema,
      Post: s.postSchema,
      PostPage: s.postPageSchema,
      Note: s.noteSchema,
      UploadLink: s.uploadLinkSchema,
      PartNumbers: s.partNumbersSchema,
      MultipartUpload: s.multipartUploadSchema,
      PartLinks: s.partLinksSchema,
      CompletedUpload: s.completedUploadSchema,
      DownloadLink: s.downloadLinkSchema,
      RealtimeTicket: s.realtimeTicketSchema,
      Health: s.healthSchema,
      Readiness: s.readinessSchema,
      ...oidcSchemas,
    },
    responses: { ...errorResponses, ...emailResponses },
  },
} as const;
