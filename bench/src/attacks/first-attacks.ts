/** Attacks 1 to 4: list pages not kept, a flipping account, distributed logins. */
import type { PacedRequest, PacedStream } from '../paced-spec';
import type { Attack } from './attack';
import { addresses, FLIP_ATTACK, LIST_ATTACK, LIST_ATTACK_ADDRESSES, LOGIN_ATTACK, TAGS } from './settings';

export function firstAttacks(ctx: {
  flipPath: string;
  flipHeaders: Record<string, string>;
  tagTotals: number[];
}): Attack[] {
  const listPages: PacedRequest = {
    kind: 'list pages',
    tags: TAGS.map((tag, i) => ({ tag, total: ctx.tagTotals[i] ?? 0 })),
    maxLimit: LIST_ATTACK.maxLimit,
  };
  const lister = (address: string): PacedStream => ({
    name: 'attacker',
    request: listPages,
    ratePerS: LIST_ATTACK.ratePerS,
    concurrency: LIST_ATTACK.concurrency,
    addresses: [address],
  });
  return [
    {
      name: 'one address',
      what: `list pages not kept (page up to the last, limit 1..${LIST_ATTACK.maxLimit}, ${TAGS.length} tags), ${LIST_ATTACK.concurrency} at a time, ${LIST_ATTACK.ratePerS}/s, from 1 address`,
      streams: addresses(20, 1).map(lister),
    },
    {
      name: `${LIST_ATTACK_ADDRESSES} addresses`,
      what: `the same from each of ${LIST_ATTACK_ADDRESSES} addresses (${LIST_ATTACK.ratePerS * LIST_ATTACK_ADDRESSES}/s in all)`,
      streams: addresses(32, LIST_ATTACK_ADDRESSES).map(lister),
    },
    {
      name: 'flipping account',
      what: `one account puts its own post to draft and back to published, ${FLIP_ATTACK.ratePerS}/s (${FLIP_ATTACK.ratePerS * 15} in 15 s), ${FLIP_ATTACK.concurrency} at a time, from ${FLIP_ATTACK.addresses} addresses in turn`,
      streams: [
        {
          name: 'attacker',
          request: { kind: 'flip', path: ctx.flipPath, headers: ctx.flipHeaders },
          ratePerS: FLIP_ATTACK.ratePerS,
          concurrency: FLIP_ATTACK.concurrency,
          addresses: addresses(64, FLIP_ATTACK.addresses),
        },
      ],
    },
    {
      name: 'distributed logins',
      what: `wrong logins for unknown accounts from ${LOGIN_ATTACK.addresses} addresses, each ${LOGIN_ATTACK.concurrency} at a time and ${LOGIN_ATTACK.ratePerS}/s`,
      streams: addresses(100, LOGIN_ATTACK.addresses).map((address) => ({
        name: 'attacker',
        request: { kind: 'unknown login' },
        ratePerS: LOGIN_ATTACK.ratePerS,
        concurrency: LOGIN_ATTACK.concurrency,
        addresses: [address],
      })),
    },
  ];
}
