/** Values shared by every suite. The secret is for tests only and is never used elsewhere. */
export const TEST_JWT_SECRET = 'test-only-secret-0123456789abcdef0123456789abcdef';
export const TEST_S3 = {
  accessKeyId: 'testaccess',
  secretAccessKey: 'testsecret-testsecret',
  region: 'us-east-1',
  bucket: 'content-test',
} as const;
export const TEST_FRONTEND_ORIGIN = 'http://localhost:3000';
