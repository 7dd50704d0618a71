/**
 * The object model's resource errors: stable codes the clients of the original service know
 * (`CardIsAlreadyAssigned`) and those the issue names (`MissingType`, `WrongType`,
 * `ConcurrencyConflict`, `DuplicateName`, `InvalidFolder`, `FolderNotEmpty`).
 */
import { ApiError, badRequest, conflict, forbidden, methodNotAllowed, notFound, validationFailed } from '../errors.ts';

export const missingType = (where = 'The body'): ApiError =>
  badRequest('MissingType', `${where} must carry a "$type" property.`);

export const wrongType = (got: string, expected: readonly string[], where = 'The body'): ApiError =>
  badRequest('WrongType', `${where} has $type "${got}"; expected ${expected.join(' or ')}.`);

/** A field of the wrong JSON type or outside its limits; `field` is a path such as `Addresses[0].City`. */
export const invalidField = (field: string, problem: string): ApiError =>
  validationFailed(field ? `${field}: ${problem}` : problem);

export const invalidFolder = (message: string): ApiError => badRequest('InvalidFolder', message);


export const concurrencyConflict = (stored: number): ApiError =>
  conflict('ConcurrencyConflict', `The object was changed by someone else (its ConcurrencyVersion is now ${stored}); read it again and retry.`);

export const duplicateName = (name: string): ApiError =>
  conflict('DuplicateName', `An object named "${name}" already exists here.`);

export const cardIsAlreadyAssigned = (card: string): ApiError =>
  conflict('CardIsAlreadyAssigned', `Card ${card} is already assigned to another person.`);

export const scimUserNameTaken = (userName: string): ApiError =>
  conflict('UserNameTaken', `Another person of this instance has the SCIM userName "${userName}".`);

export const scimExternalIdTaken = (externalId: string): ApiError =>
  conflict('ExternalIdTaken', `Another person of this instance has the SCIM externalId "${externalId}".`);

export const folderNotEmpty = (): ApiError =>
  conflict('FolderNotEmpty', 'The folder still holds objects; delete or move them first.');

export const objectNotFound = (): ApiError => notFound('The object does not exist.');

export const outOfScope = (): ApiError => forbidden('The folder is outside the scope of your instance.');

export const roleForbidden = (what: string): ApiError => forbidden(`Your role does not allow you to ${what}.`);

export const onlyMethods = (allow: string): ApiError => methodNotAllowed(allow);

export const notImplemented = (what: string): ApiError => new ApiError(501, 'NotImplemented', `${what} is not implemented yet.`);
