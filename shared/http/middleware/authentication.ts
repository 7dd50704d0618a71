/**
 * Checks the caller's token on the routes that need one, and puts its principal on the request.
 *
 * A GET without a body reads only, as do the routes marked `reads` (search and lastevent, which
 * carry their query in a body): the operation may run while the caller's status check (a read of
 * the user and its instances, cached a while per environment) is still in flight; the answer
 * waits for both, and a refused status answers 401 whatever the operation found. So do the routes
 * marked `readsFirst` (a publish), whose operation waits for the verdict before its later reads
 * and its write. Everything else may write (a GET with a body is the spec's event type update), so
 * it starts only once the status is known.
 */
import { gatherReads } from '../../db/item-reads.ts';
import type { BaseDeps } from '../operation-contract.ts';
import { requiredState, type PipelineMiddleware, type PipelineRequest } from './state.ts';

export function authentication(deps: () => Pick<BaseDeps, 'authenticator' | 'config'>): PipelineMiddleware {
  return {
    before: async function authenticate(request: PipelineRequest) {
      const s = requiredState(request.event);
      if (!s.req!.route.auth) return;
      const { authenticator } = deps();
      const authorization = s.req!.headers.authorization;
      const readOnly = s.req!.route.reads === true || (s.req!.method === 'GET' && s.req!.rawBody === undefined);
      // A call that writes only after its first reads (Route.readsFirst) runs beside the checks
      // too: it waits for the verdict itself before anything more.
      if ((readOnly || s.req!.route.readsFirst === true) && authenticator.authenticateDeferred) {
        // Where invocations run one at a time, the reads of the caller's keys and status (a new
        // environment's) and the operation's first reads by key go out as one request, when the
        // operation has started (the pipeline's operation step): one connection, not two, on a
        // cold start's GET.
        if (deps().config.invocationsOneAtATime) s.sendReads = gatherReads();
        const { principal, status } = await authenticator.authenticateDeferred(authorization).catch((err: unknown) => {
          s.sendReads?.();
          throw err;
        });
        // Awaited by the operation step (until then a refusal must not count as unhandled); this
        // callback comes first, so `accepted` is set by the time the answer is logged.
        status.then(
          () => (s.accepted = true),
          () => {},
        );
        s.status = status;
        s.req = { ...s.req!, principal, verdict: status.then(() => true, () => false) };
        return;
      }
      const principal = await authenticator.authenticate(authorization);
      s.req = { ...s.req!, principal };
    },
  };
}
