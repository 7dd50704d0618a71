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
import type { Config } from './config.ts';
import { onFirstUse } from './first-use.ts';

const METRICS_NAMESPACE = 'Gatehouse';

/** The figures of one answered request. */
interface RequestFigures {
  readonly operation: string;
  readonly status: number;
  readonly ms: number;
  readonly consumedCapacity: number;
  /** Token family: the request was a password/code login attempt, and whether it failed on its credentials. */
  readonly login?: { readonly failed: boolean };
}

export interface RequestMetrics {
  /** Writes the figures; a promise while Powertools Metrics is still loading (the figures are written once it is). */
  record(f: RequestFigures): Promise<void> | undefined;
}

const NONE: RequestMetrics = { record: () => undefined };

/**
 * Powertools Metrics, loaded by the first environment that emits (its own chunk, not in the code a
 * cold start loads): the local runtime and the tests never do. In Lambda the load starts with the
 * first request (shared/http/middleware/request-context.ts), and figures recorded before it has
 * settled are written once it has; the request waits for that write before it answers.
 */
const powertools = onFirstUse(() => import('@aws-lambda-powertools/metrics'));

/** The metrics of a family's execution environment; a no-op unless `config.metrics`. Starts loading Powertools Metrics. */
export function createRequestMetrics(cfg: Pick<Config, 'metrics'>, family: string): RequestMetrics {
  if (!cfg.metrics) return NONE;
  let write: ((f: RequestFigures) => void) | undefined;
  const loaded = powertools().then(({ Metrics, MetricUnit }) => {
    const metrics = new Metrics({ namespace: METRICS_NAMESPACE, serviceName: family });
    write = (f) => {
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
    };
  });
  // A failed load is reported by the records that wait for it (the request pipeline logs it).
  loaded.catch(() => {});
  return {
    record(f) {
      if (!write) return loaded.then(() => write!(f));
      write(f);
      return undefined;
    },
  };
}
