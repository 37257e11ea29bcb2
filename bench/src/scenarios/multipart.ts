/** Scenario 8: a large file in parts through our signed links, against the SDK's own multipart upload. */
import type { RunningServer } from '@cs/devstack';
import type { BenchSystem } from '../bench-system';
import { interleave, runChild } from '../measure';
import { type Report, type Row, ratio } from '../report-json';
import { MULTIPART_MB, MULTIPART_ROUNDS, PART_CONCURRENCY, PART_SIZE, S3 } from '../run-settings';
import { round } from '../stats';

export async function multipart({ gw, token }: BenchSystem, storage: RunningServer) {
  const multipartSettings = {
    sizeMb: MULTIPART_MB,
    partSize: PART_SIZE,
    concurrency: PART_CONCURRENCY,
    gateway: gw,
    token,
    endpoint: storage?.url,
    ...S3,
  };
  const multipart = await interleave(
    (['ours', 'sdk'] as const).map((mode) => ({
      name: mode,
      run: () => runChild('multipart-upload.js', [JSON.stringify({ ...multipartSettings, mode })]),
    })),
    MULTIPART_ROUNDS,
  );
  return {
    sizeMb: MULTIPART_MB,
    partSize: PART_SIZE,
    concurrency: PART_CONCURRENCY,
    ours: { ...multipart.ours, mbPerS: round(MULTIPART_MB * (multipart.ours?.rps ?? 0)) },
    sdk: { ...multipart.sdk, mbPerS: round(MULTIPART_MB * (multipart.sdk?.rps ?? 0)) },
    ratio: ratio(multipart.ours?.rps, multipart.sdk?.rps),
    goal: 'ours ≥ 0.9 × @aws-sdk/lib-storage',
  };
}

export function multipartRows(multipart: Report): Row[] {
  return [
    [
      `8 multipart, ${multipart.sizeMb} MiB`,
      `ours ${multipart.ours.mbPerS} MiB/s; lib-storage ${multipart.sdk.mbPerS} MiB/s (parts of ${multipart.partSize / 1048576} MiB, ${multipart.concurrency} at a time)`,
      String(multipart.ratio),
      multipart.goal,
    ],
  ];
}
