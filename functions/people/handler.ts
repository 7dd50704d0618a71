/**
 * People family: the person collection (cards are saved with the person; `<person>/cards` changes
 * one card), the lookup by card, its connections (access levels, badge type) and the access level
 * PUT that field clients use.
 */
import { createCoreDeps, type CoreDeps } from '#shared/deps.ts';
import { makeHandler } from '#shared/http/pipeline.ts';
import type { Operation } from '#shared/http/types.ts';
import { objectOperations } from '#shared/objects/operations.ts';
import { relationHooks } from '#shared/objects/relation-hooks.ts';
import { connectOperation, disconnectOperation, putPersonAccessLevel } from '#shared/relations/operations.ts';

const objects = objectOperations(relationHooks);

/** `PUT people/<key>/accesslevels` connects an access level; other PUT links are the generic ones. */
const putLink: Operation = (req, deps) =>
  req.params.link === 'accesslevels' ? putPersonAccessLevel(req, deps) : objects.collection.putLink!(req, deps);

export const operations = { ...objects.collection, ...objects.people, putLink, connect: connectOperation, disconnect: disconnectOperation };

export const createHandler = (deps: () => CoreDeps) => makeHandler({ family: 'people', operations, deps });

export const handler = createHandler(() => createCoreDeps());
