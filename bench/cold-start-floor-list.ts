/**
 * The status floor's first list (the `listFloor`): what the smallest protected function that
 * refuses disabled callers (bench/cold-start-floor-status.ts) costs when its first request is the
 * first page of a collection, as the first request of most families in the bench is (`GET
 * accesslevels?pageSize=1`, the same request and token as `access`). A page is a Query, which
 * cannot join the BatchGetItem of the keys and the caller's status: the two go out at once, as a
 * family's first list sends them (shared/http/pipeline.ts), and the answer waits for the
 * verification, the status and the page. Bundled and run as the other floors are; never deployed.
 */
import { listFloorHandler } from './cold-start-floor.ts';
import { status } from './cold-start-floor-status.ts';

export const handler = listFloorHandler(status);
