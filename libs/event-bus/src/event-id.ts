/** The ids of the stream's events (Redis stream ids, `<ms>-<seq>`), which only grow. */

const ID = /^(\d{1,16})-(\d{1,16})$/;

/** Compares two stream ids: negative, zero or positive. */
export function compareIds(a: string, b: string): number {
  const [, am = '0', as = '0'] = ID.exec(a) ?? [];
  const [, bm = '0', bs = '0'] = ID.exec(b) ?? [];
  return Number(am) - Number(bm) || Number(as) - Number(bs);
}

export const isEventId = (id: string): boolean => ID.test(id);
