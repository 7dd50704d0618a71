/**
 * Access family: access levels (with their connections to schedules and readers), badge types
 * and card formats; access decisions and the troubleshooting calls (who can pass a reader, which
 * readers a person can pass); doors: lockdown, reader modes, momentary unlock, door status.
 */
import { createCoreDeps, type CoreDeps } from '#shared/core-deps.ts';
import { makeHandler } from '#shared/http/pipeline.ts';
import { operationsOnFirstCall } from '#shared/http/lazy-operations.ts';
import type { Operation } from '#shared/http/operation-contract.ts';
import { withEntryChecks, withEntryNames } from '#shared/access/entries.ts';
import { metering } from '#shared/usage/middleware.ts';
import { objectOperations } from '#shared/objects/object-operations.ts';
import { relationHooks } from '#shared/objects/relation-hooks.ts';
import { connectOperation, disconnectOperation, listConnectionsOperation } from '#shared/relations/relation-operations.ts';

const objects = objectOperations(withEntryChecks(relationHooks));

/** The collection calls that answer access levels, with the names of their entries filled. */
const namedEntries = (op: Operation): Operation => async (req, deps) => {
  const res = await op(req, deps);
  return req.route.collection === 'accesslevels' && res.status < 300 ? withEntryNames(deps, res) : res;
};
const collection = Object.fromEntries(
  Object.entries(objects.collection).map(([name, op]) => [name, ['get', 'list', 'create', 'replace'].includes(name) ? namedEntries(op) : op]),
);

/** The decision calls load the engine and the facts with the first of them. */
const decisions = operationsOnFirstCall(() => import('#shared/access/decision-operations.ts').then((m) => m.decisionOperations), ['accessDecision', 'whoCanPass', 'accessibleReaders']);

/** The door calls (lockdown, reader mode, unlock, door status) load with the first of them. */
const doors = operationsOnFirstCall(
  () => import('#shared/access/door-operations.ts').then((m) => m.doorOperations),
  ['startLockdown', 'endLockdown', 'getLockdown', 'setReaderMode', 'unlockDoor', 'doorStatus', 'credentials'],
);

export const operations = {
  ...collection,
  connect: connectOperation,
  listConnections: listConnectionsOperation,
  disconnect: disconnectOperation,
  ...decisions,
  ...doors,
};

export const createHandler = (deps: () => CoreDeps) => makeHandler({ family: 'access', operations, deps, middlewares: [metering] });

export const handler = createHandler(() => createCoreDeps());
