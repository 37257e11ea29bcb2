/** Scenario 7: the 304 path against the full read of scenario 1. */
import type { BenchSystem } from '../bench-system';
import { interleave, load } from '../measure';
import { type Report, type Row, ratio } from '../report-json';
import { CONNECTIONS as C } from '../run-settings';

/** The post's ETag, read first; then the measure, which sends it back. */
export async function notModifiedOf({ gw, postPath }: BenchSystem) {
  const etag = (await fetch(`${gw}${postPath}`)).headers.get('etag') ?? '';
  return async () => {
    const cached = await interleave([
      {
        name: '304',
        run: () => load({ url: `${gw}${postPath}`, headers: { 'if-none-match': etag }, connections: C, expect: 304 }),
      },
      { name: '200', run: () => load({ url: `${gw}${postPath}`, connections: C }) },
    ]);
    return { ...cached, ratio304To200: ratio(cached['304']?.rps, cached['200']?.rps) };
  };
}

export function notModifiedRows(notModified: Report): Row[] {
  return [
    [
      '7 304',
      `304 ${notModified['304'].rps.toFixed(0)} rps; 200 ${notModified['200'].rps.toFixed(0)} rps`,
      String(notModified.ratio304To200),
      '(faster than 200)',
    ],
  ];
}
