export {
  FOLLOW_EVERY_MS,
  followRevocations,
  type RevocationSource,
  revocationsFrom,
  verifierFollowing,
  verifierOf,
} from './revocation-feed';
export { notBeforeAt, type Revocation, type RevocationBatch, RevocationList, tokenDigest } from './revocations';
export * from './tokens';
export {
  createTokenVerifier,
  FIRST_READ_WAIT_MS,
  type SignedToken,
  STALE_AFTER_MS,
  type TokenVerifier,
} from './verifier';
