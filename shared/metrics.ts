/**
 * CloudWatch metrics of each request, written as Embedded Metric Format lines by Powertools
 * Metrics: namespace `Gatehouse`, dimensions `service` (the family) and `Operation` (the route
 * table's operation name); `Requests`, `Errors` (5xx answers), `Latency` and `ConsumedCapacity`
 * (DynamoDB capacity units of the request's calls). The token family adds `LoginAttempts` and
 * `LoginFailures` with the `service` dimension only (the failed-login alarm's signal).
 *
 * The tenant is never a dimension (each dimension value is a custom metric, $0.30 a month): it
 * is a field of the request log line, which Logs Insights queries.
 *
 * Emitted only in Lambda (`config.metrics`): CloudWatch reads EMF lines from the function's log.
 * In the local runtime and in tests nothing is emitted (the request log line carries the same
 * figures), so stdout is not flooded with EMF blobs.
 */
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { Config } from './config.ts';

export const METRICS_NAMESPACE = 'Gatehouse';

/** The figures of one answered request. */
export interface RequestFigures {
  readonly operation: string;
  readonly status: number;
  readonly ms: number;
  readonly consumedCapacity: number;
  /** Token family: the request was a password/code login attempt, and whether it failed on its credentials. */
  readonly login?: { readonly failed: boolean };
}

export interface RequestMetrics {
  record(f: RequestFigures): void;
}

const NONE: RequestMetrics = { record: () => {} };

/** The metrics of a family's execution environment; a no-op unless `config.metrics`. */
export function createRequestMetrics(cfg: Pick<Config, 'metrics'>, family: string): RequestMetrics {
  if (!cfg.metrics) return NONE;
  const metrics = new Metrics({ namespace: METRICS_NAMESPACE, serviceName: family });
  return {
    record(f) {
      metrics.addDimension('Operation', f.operation);
      metrics.addMetric('Requests', MetricUnit.Count, 1);
      metrics.addMetric('Errors', MetricUnit.Count, f.status >= 500 ? 1 : 0);
      metrics.addMetric('Latency', MetricUnit.Milliseconds, f.ms);
      metrics.addMetric('ConsumedCapacity', MetricUnit.Count, f.consumedCapacity);
      metrics.publishStoredMetrics();
      if (f.login) {
        // Without the Operation dimension: one metric per family, as the alarm reads it.
        metrics.addMetric('LoginAttempts', MetricUnit.Count, 1);
        metrics.addMetric('LoginFailures', MetricUnit.Count, f.login.failed ? 1 : 0);
        metrics.publishStoredMetrics();
      }
    },
  };
}
