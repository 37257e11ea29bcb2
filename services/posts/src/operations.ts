/**
 * What the posts package offers besides its server, for whoever writes to the posts database
 * around the service (a seed, a migration, a fix by hand): afterwards, `markListingChanged` tells
 * every replica's public list to read the posts again (listing.ts), or they see the write within
 * 30 s. The benchmark seeds its volumes this way.
 */
export { markListingChanged } from './listing';
