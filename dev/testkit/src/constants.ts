/** Values shared by every suite. The secret is for tests only and is never used elsewhere. */
export const TEST_JWT_SECRET = 'test-only-secret-0123456789abcdef0123456789abcdef';
export const TEST_S3 = {
  accessKeyId: 'testaccess',
  secretAccessKey: 'testsecret-testsecret',
  region: 'us-east-1',
  bucket: 'content-test',
} as const;
export const TEST_FRONTEND_ORIGIN = 'http://localhost:3000';
/**
 * The clients registered at the test run's OpenID Connect provider (TEST_OIDC_ISSUER). Native
 * clients: their loopback callbacks match on any port, and every test's server listens on a free
 * one. The second client is another application at the same provider: a code made for it must not
 * log anyone in at ours.
 */
export const TEST_OIDC_PROVIDER_NAMES = ['test', 'acme'] as const;
export const TEST_OIDC_CLIENT = { id: 'content-service-test', secret: 'test-only-oidc-secret-0123456789' } as const;
export const TEST_OIDC_OTHER_CLIENT = { id: 'another-application', secret: 'test-only-other-secret-987654' } as const;
/** The callbacks a test client may name at the provider: ours, under each test provider name. */
export function testOidcRedirects(names: readonly string[] = TEST_OIDC_PROVIDER_NAMES): string[] {
  return names.flatMap((name) =>
    ['127.0.0.1', 'localhost'].map((host) => `http://${host}/api/auth/oidc/${name}/callback`),
  );
}
