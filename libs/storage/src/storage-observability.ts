import type { S3Client } from '@aws-sdk/client-s3';
import { counter, histogram, metricsEnabled, startCallSpan, tracingOn } from '@cs/telemetry';
import { errorKind } from './storage-errors';

/**
 * Observes every call the client sends, retries included: with metrics on, its duration into
 * `storage_operation_duration_seconds` and a failure by kind into `storage_errors_total`; with
 * tracing on, a span (`S3.HeadObject`) under the request that asked. Links are signed by a client
 * of their own, so nothing here sees a presigning (it sends nothing).
 */
export function observe(s3: S3Client, bucket: string): void {
  if (!metricsEnabled() && !tracingOn()) return;
  const metrics = metricsEnabled()
    ? {
        duration: histogram(
          'storage_operation_duration_seconds',
          'Object storage calls, retries included, by operation and outcome.',
          ['operation', 'outcome'],
        ),
        errors: counter('storage_errors_total', 'Object storage calls that failed, by operation and kind.', [
          'operation',
          'kind',
        ]),
      }
    : undefined;
  s3.middlewareStack.add(
    (next, context) => async (args) => {
      const operation = (context.commandName ?? 'unknown').replace(/Command$/, '');
      const span = startCallSpan(`S3.${operation}`, () => ({
        'rpc.system': 'aws-api',
        'rpc.service': 'S3',
        'rpc.method': operation,
        'aws.s3.bucket': bucket,
      }));
      const started = process.hrtime.bigint();
      const seconds = () => Number(process.hrtime.bigint() - started) / 1e9;
      try {
        const result = await next(args);
        span?.end();
        metrics?.duration.observe({ operation, outcome: 'ok' }, seconds());
        return result;
      } catch (err) {
        span?.end(err);
        metrics?.duration.observe({ operation, outcome: 'error' }, seconds());
        metrics?.errors.inc({ operation, kind: errorKind(err) });
        throw err;
      }
    },
    { step: 'initialize', name: 'storageObservability' },
  );
}
