/**
 * The product's limits on what one client may do, turned off: a benchmark measures what the system
 * can do, with a few clients sending far more than any one person would. Scenario 11 (the attacks)
 * keeps them on; it is about them.
 */
export const LIMITS_OFF = { AUTH_RATE_LIMIT: '0', RATE_LIMIT: '0', PUBLIC_CHANGES_PER_MINUTE: '0' } as const;
