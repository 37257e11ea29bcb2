/** Attacks 5 to 10 (issue 46): the ones that found its faults. */
import type { PacedResult } from '../paced-spec';
import { round } from '../stats';
import type { Attack, AttackContext } from './attack';
import { bulkImport, bulkImportS, publishRate, sayRate } from './bulk-import';
import { BOTNET, BULK, BULK_IMPORT, BULK_POSTS, BUS_SEED, LOGOUT_FLOOD, RESUME, UNREAD } from './settings';
import { okCount, percentOf, statusList } from './statuses';

export function newAttacks(ctx: AttackContext, attackS: number): Attack[] {
  const bulk = (from: string[], total?: number) => bulkImport(ctx.publisherHeaders, from, total);
  const bulkS = bulkImportS(attackS);
  let logBefore = 0;
  /** The seeding of the bus before the resume flood, for its sentence. */
  let busSeeded: PacedResult | undefined;
  return [
    {
      name: 'botnet of wrong logins',
      what: `wrong logins for unknown accounts, ${BOTNET.concurrency} at a time as fast as answered, a fresh address (127.${BOTNET.block}.y.z) every ${BOTNET.perAddress} requests, each on a connection of its own`,
      streams: [
        {
          name: 'attacker',
          request: { kind: 'unknown login' },
          ratePerS: BOTNET.ratePerS,
          concurrency: BOTNET.concurrency,
          addresses: [],
          fresh: { block: BOTNET.block, perAddress: BOTNET.perAddress },
        },
      ],
      after: async (a) => `${Math.ceil((a.result?.sent ?? 0) / BOTNET.perAddress)} addresses used`,
    },
    {
      name: 'unread streams with big updates',
      what: `one account opens \`GET /api/realtime?topics=notes\` ${UNREAD.perAddress} times from each of ${UNREAD.addresses.length} addresses (${UNREAD.perAddress * UNREAD.addresses.length} tried), and as many anonymous \`topics=posts\` streams, on raw sockets that read the headers and never read again; then it updates one of its notes ${UNREAD.updates} times with a body of ${UNREAD.bodyBytes / 1000} kB`,
      streams: [],
      addresses: [...UNREAD.addresses, UNREAD.updateAddress],
      run: async (durationS) => {
        const r = await ctx.runUnread({
          gateway: ctx.gateway,
          groups: [
            {
              name: 'notes, the account',
              path: '/api/realtime?topics=notes',
              headers: ctx.streamerHeaders,
              addresses: UNREAD.addresses,
              perAddress: UNREAD.perAddress,
            },
            {
              name: 'posts, anonymous',
              path: '/api/realtime?topics=posts',
              headers: {},
              addresses: UNREAD.addresses,
              perAddress: UNREAD.perAddress,
            },
          ],
          update: {
            path: ctx.bigNotePath,
            headers: ctx.streamerHeaders,
            address: UNREAD.updateAddress,
            bodyBytes: UNREAD.bodyBytes,
            count: UNREAD.updates,
          },
          holdS: durationS,
        });
        const groups = Object.values(r.groups);
        const statuses: Record<string, number> = {};
        for (const g of groups)
          for (const [status, n] of Object.entries(g.statuses)) statuses[status] = (statuses[status] ?? 0) + n;
        const sent = groups.reduce((n, g) => n + g.tried, 0);
        return {
          result: {
            sent,
            rps: round(sent / durationS, 2),
            seconds: durationS,
            p50: r.updates.p50,
            p99: r.updates.max,
            succeeded: percentOf(statuses['200'] ?? 0, sent),
            statuses,
          },
          detail: `${Object.entries(r.groups)
            .map(
              ([name, g]) =>
                `${name}: ${g.tried} tried, ${statusList(g.statuses)}, ${g.endedByServer} of those held ended by the server`,
            )
            .join(
              '; ',
            )}; all answered in ${r.openedInS} s. The ${UNREAD.updates} updates: ${statusList(r.updates.statuses)}, p50 ${r.updates.p50} ms, slowest ${r.updates.max} ms`,
        };
      },
    },
    {
      name: 'resume flood',
      what: `anonymous \`topics=posts\` streams with \`Last-Event-ID: 0-0\`, ${RESUME.ratePerS} a second from ${RESUME.addresses.length} addresses, each read ${RESUME.readMs / 1000} s then closed; the bus seeded first with ${BUS_SEED.updates} note updates of ${BUS_SEED.bodyBytes / 1000} kB (not measured)`,
      streams: [
        {
          name: 'attacker',
          request: {
            kind: 'stream briefly',
            path: '/api/realtime?topics=posts',
            headers: { 'last-event-id': '0-0' },
            readMs: RESUME.readMs,
          },
          ratePerS: RESUME.ratePerS,
          concurrency: RESUME.concurrency,
          addresses: RESUME.addresses,
        },
      ],
      addresses: BUS_SEED.addresses,
      prepare: async () => {
        // A note for each address, so that no two updates race for one note.
        const n = BUS_SEED.addresses.length;
        const seeded = await ctx.runPaced({
          gateway: ctx.gateway,
          durationS: 600,
          seed: 7,
          streams: BUS_SEED.addresses.map((address, i) => ({
            name: 'seed',
            request: {
              kind: 'note update',
              path: ctx.busNotePaths[i] ?? '',
              headers: ctx.streamerHeaders,
              bodyBytes: BUS_SEED.bodyBytes,
            },
            ratePerS: BUS_SEED.ratePerS / n,
            concurrency: Math.max(1, Math.floor(BUS_SEED.concurrency / n)),
            addresses: [address],
            total: Math.ceil(BUS_SEED.updates / n),
          })),
        });
        busSeeded = seeded.seed;
      },
      after: async () =>
        `the bus seeded with ${okCount(busSeeded)} of ${BUS_SEED.updates} updates in ${busSeeded?.seconds ?? 0} s (${statusList(busSeeded?.statuses ?? {})})`,
    },
    {
      name: 'logout flood',
      what: `one access token sent to \`POST /api/auth/logout\` over and over, ${LOGOUT_FLOOD.ratePerS}/s from ${LOGOUT_FLOOD.addresses.length} addresses in turn, ${LOGOUT_FLOOD.concurrency} at a time`,
      streams: [
        {
          name: 'attacker',
          request: { kind: 'json', method: 'POST', path: '/api/auth/logout', headers: ctx.logoutHeaders, body: {} },
          ratePerS: LOGOUT_FLOOD.ratePerS,
          concurrency: LOGOUT_FLOOD.concurrency,
          addresses: LOGOUT_FLOOD.addresses,
        },
      ],
      prepare: async () => {
        logBefore = await ctx.revocationEntries();
      },
      after: async () =>
        `identity's revocation log (its collection): ${logBefore} entries before, ${await ctx.revocationEntries()} after`,
    },
    // From one address first: the bystander's measure without an attack was taken on the data as
    // it was before, and after the import its public list reads 10,000 posts more. Run after the
    // import, this attack's list came out at 2.04x; run before, at 1.03x.
    {
      name: 'bulk publisher, 1 address',
      what: `one account creates and publishes distinct posts from one address, for the bystander's measure: RATE_LIMIT allows it ${BULK.postsPerSPerAddress} posts/s`,
      streams: [bulk(BULK.oneAddress)],
      after: async (a) => sayRate(publishRate(a.result)),
    },
    {
      name: BULK_IMPORT,
      what: `one account creates and publishes ${BULK_POSTS} distinct posts (POST, then PUT status=published), ${BULK.concurrency} in flight, from ${BULK.addresses.length} addresses (an import's pool of workers), each at ${BULK.postsPerSPerAddress * 2} requests a second, just under RATE_LIMIT: at most ${round(BULK.postsPerSPerAddress * BULK.addresses.length, 1)} posts/s; PUBLIC_CHANGES_PER_MINUTE at its default`,
      streams: [bulk(BULK.addresses, BULK_POSTS)],
      durationS: bulkS,
      after: async (a) => sayRate(publishRate(a.result)),
    },
  ];
}
