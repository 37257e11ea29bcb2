/** The few statistics the benchmarks share: medians of rounds, and ratios of interleaved rounds. */

export const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
};

export const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))] ?? 0;
};

/**
 * The median of round-by-round ratios of `a` to `b`, measured interleaved: each round's pair ran
 * back to back, so a drift over the run (the machine, a system still warming) cancels within it.
 * The ratio of the two medians does not cancel it: in one run the baseline's rounds climbed 30%
 * from first to last, and that ratio then moved by 3 points with nothing changed.
 */
export function pairedRatio(a: number[], b: number[]): number {
  const each = a.map((x, i) => x / (b[i] || Number.NaN)).filter(Number.isFinite);
  return each.length ? Math.round(median(each) * 1000) / 1000 : 0;
}

export function round(n: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}
