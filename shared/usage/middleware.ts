/**
 * Usage metering as a pipeline middleware, which every HTTP family adds to its pipeline
 * (functions/<family>/handler.ts): each answered request counts one `Req_<family>` for its tenant
 * (shared/http/middleware/state.ts `tenantOf`). The tenant is the caller's instance, from its
 * token, whatever folder the path names: the instance that signed in is the one that pays, and it
 * needs no read to know. A call without a token is metered only when its operation names the
 * tenant (`POST /token`: the instance logged into).
 *
 * The counts are written at the end of a request once the flush interval has passed
 * (shared/usage/recorder.ts); the request waits for that write before it answers, as a Lambda
 * environment may be frozen right after.
 */
import type { PipelineMiddleware, PipelineOf, PipelineRequest } from '../http/middleware/state.ts';
import { stateOf, tenantOf } from '../http/middleware/state.ts';
import { requestCounter } from './meter.ts';
import { createUsageRecorder, type UsageRecorder, type UsageRecorderDeps } from './recorder.ts';

/**
 * Meters the requests of a family. Added before the pipeline's own steps (outermost), so it counts
 * a request once it has been answered and logged.
 */
export function metering<D extends UsageRecorderDeps>({ family, deps }: PipelineOf<D>): PipelineMiddleware {
  let usage: UsageRecorder | undefined;
  const requestCount = { [requestCounter(family)]: 1 };

  /** Counts an answered request; the promise is the usage flush, when one is due. */
  function meterRequest(request: PipelineRequest): Promise<void> | undefined {
    const d = deps();
    // Observing a request never changes its answer.
    try {
      const instanceKey = tenantOf(stateOf(request.event));
      usage ??= createUsageRecorder(d);
      if (instanceKey) usage.add(instanceKey, requestCount);
      const flushed = usage.isDue() ? usage.flushIfDue() : undefined;
      return flushed?.catch((err: unknown) => d.logger.warn('usage metering failed', { error: (err as Error).message }));
    } catch (err) {
      d.logger.warn('usage metering failed', { error: (err as Error).message });
      return undefined;
    }
  }

  return {
    after: meterRequest,
    onError: function meterErrorAnswer(request: PipelineRequest) {
      return request.response ? meterRequest(request) : undefined;
    },
  };
}
