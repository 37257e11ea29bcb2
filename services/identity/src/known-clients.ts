/**
 * Client addresses that logged in (or registered) here lately: their bcrypt work is served before
 * a crowd of new addresses' (the priority line of the bcrypt bulkhead). A crowd of addresses that
 * never logged in, each within its rate limit, then cannot delay the people who use the service.
 * It says nothing about which accounts exist: it is kept per address, whatever the account.
 *
 * In this process's memory, at most MAX_ADDRESSES, each for KEEP_MS after its last login, the
 * oldest forgotten first: a standing, not a security decision, so a restart or another replica
 * that has not seen the address yet only means the normal line.
 */
const MAX_ADDRESSES = 100_000;
const KEEP_MS = 24 * 3_600_000;

export function createKnownClients() {
  /** Address → when it last logged in; Map keeps insertion order, so the oldest come first. */
  const seen = new Map<string, number>();
  return {
    loggedIn(address: string): void {
      seen.delete(address);
      seen.set(address, Date.now());
      for (const oldest of seen.keys()) {
        if (seen.size <= MAX_ADDRESSES) break;
        seen.delete(oldest);
      }
    },
    has(address: string): boolean {
      const at = seen.get(address);
      return at !== undefined && Date.now() - at < KEEP_MS;
    },
  };
}

export type KnownClients = ReturnType<typeof createKnownClients>;
