/**
 * Folders family: the caller's instance (`GET /api`), folders and instances at their own Href
 * (`/api/f/<key>`, with their standard links), the folders, instances and users collections, an
 * instance's metered usage (`/api/f/<instance_key>/usage`), a user's "sign out everywhere"
 * (`POST .../users/<key>/revokesessions`), and the instance's identity provisioning: its SCIM tokens
 * and the SCIM 2.0 service provider at `/scim/v2/<instance key>/` (shared/scim/), whose answers
 * are labelled `application/scim+json` and whose errors carry SCIM's body (`scimAnswers`, outermost).
 */
import { createCoreDeps, type CoreDeps } from '#shared/core-deps.ts';
import { makeHandler } from '#shared/http/pipeline.ts';
import { metering } from '#shared/usage/middleware.ts';
import { scimAnswers } from '#shared/scim/scim-errors.ts';
import { objectOperations } from '#shared/objects/object-operations.ts';
import { relationHooks } from '#shared/objects/relation-hooks.ts';
import { usageOperations } from '#shared/usage/usage-operations.ts';
import { operationsOnFirstCall } from '#shared/http/lazy-operations.ts';

const objects = objectOperations(relationHooks);


// SCIM (provisioning by an identity provider) loads with its first call likewise.
const scim = operationsOnFirstCall(() => import('#shared/scim/scim-operations.ts').then((m) => m.scimOperations), [
  'listScimTokens',
  'createScimToken',
  'removeScimToken',
  'scimServiceProviderConfig',
  'scimResourceTypes',
  'scimResourceType',
  'scimSchemas',
  'scimSchema',
  'scimListUsers',
  'scimCreateUser',
  'scimGetUser',
  'scimReplaceUser',
  'scimPatchUser',
  'scimRemoveUser',
  'scimListGroups',
  'scimCreateGroup',
  'scimGetGroup',
  'scimReplaceGroup',
  'scimPatchGroup',
  'scimRemoveGroup',
]);

export const operations = { ...objects.collection, ...objects.folder, ...objects.users, ...usageOperations, ...scim };

export const createHandler = (deps: () => CoreDeps) =>
  makeHandler({ family: 'folders', operations, deps, middlewares: [() => scimAnswers(), metering] });

export const handler = createHandler(() => createCoreDeps());
