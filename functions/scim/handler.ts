/**
 * SCIM family: the SCIM tokens of an instance and the SCIM 2.0 service provider that identity
 * providers (Entra ID, Okta) provision people and access levels through
 * (`shared/scim/operations.ts`). Its SCIM answers are labelled `application/scim+json` and its
 * SCIM errors carry SCIM's error body (`scimAnswers`, outermost, once the pipeline answered).
 */
import { createCoreDeps, type CoreDeps } from '#shared/deps.ts';
import { makeHandler } from '#shared/http/pipeline.ts';
import { scimAnswers } from '#shared/scim/errors.ts';
import { scimOperations } from '#shared/scim/operations.ts';
import { metering } from '#shared/usage/middleware.ts';

export const operations = scimOperations;

export const createHandler = (deps: () => CoreDeps) =>
  makeHandler({ family: 'scim', operations, deps, middlewares: [() => scimAnswers(), metering] });

export const handler = createHandler(() => createCoreDeps());
