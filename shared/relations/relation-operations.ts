/**
 * The relationship operations as families route them (see `calls.ts`): each loads the calls with
 * the relationship service, the validators and the write path on its first call (with the object
 * write side, shared/objects/write-operations.ts), so a cold start that serves a plain read of an
 * object never reads that code.
 */
import type { Operation } from '../http/operation-contract.ts';
import { onFirstUse } from '../first-use.ts';

const load = onFirstUse(() => import('../objects/write-operations.ts').then((m) => m.relationCalls));

/** `POST` or `PUT <Href>/connections/<relation>?relatedKey=` */
export const connectOperation: Operation = async (req, deps) => (await load()).connectOperation(req, deps);
/** `GET <Href>/connections/<relation>` */
export const listConnectionsOperation: Operation = async (req, deps) => (await load()).listConnectionsOperation(req, deps);
/** `DELETE <Href>/connections/<relation>/<related_key>` */
export const disconnectOperation: Operation = async (req, deps) => (await load()).disconnectOperation(req, deps);
/** `PUT /people/<key>/accesslevels` */
export const putPersonAccessLevel: Operation = async (req, deps) => (await load()).putPersonAccessLevel(req, deps);
/** `PUT /people/<key>/scheduledaccesslevelbatch` */
export const putScheduledAccessLevelBatch: Operation = async (req, deps) => (await load()).putScheduledAccessLevelBatch(req, deps);
