/**
 * SCIM's error body (RFC 7644 §3.12): `schemas`, `status` (a string), `scimType` for the 400s
 * and 409s it names, and `detail`. A {@link ScimError} is an ApiError, so the pipeline's one error
 * handler renders it; any other error a SCIM call answers (a body that is not JSON, a claim
 * taken in the object layer, a busy store) is rewritten to this body by {@link scimAnswers}, with
 * the `scimType` its stable code maps to.
 */
import { ApiError } from '../errors.ts';
import { parseJson, stringifyJson } from '../json.ts';
import type { PipelineMiddleware, PipelineRequest } from '../http/middleware/state.ts';

const ERROR_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:Error';

/** The media type of SCIM bodies (RFC 7644 §3.1); requests labelled application/json are read too. */
const SCIM_MEDIA_TYPE = 'application/scim+json';
const SCIM_CONTENT_TYPE = `${SCIM_MEDIA_TYPE}; charset=utf-8`;

/** RFC 7644 Table 9's `scimType` values this service answers. */
export type ScimType = 'invalidFilter' | 'tooMany' | 'uniqueness' | 'mutability' | 'invalidSyntax' | 'invalidPath' | 'noTarget' | 'invalidValue' | 'invalidVers' | 'sensitive';

export class ScimError extends ApiError {
  constructor(
    status: number,
    readonly scimType: ScimType | undefined,
    detail: string,
    headers: Record<string, string> = {},
  ) {
    super(status, scimType ?? `Scim${status}`, detail, headers);
    this.name = 'ScimError';
  }

  // SCIM's body holds an array (`schemas`): the error handler renders whatever toBody returns.
  override toBody(): Record<string, string> {
    return scimErrorBody(this.status, this.scimType, this.message) as unknown as Record<string, string>;
  }
}

function scimErrorBody(status: number, scimType: string | undefined, detail: string): Record<string, unknown> {
  return { schemas: [ERROR_SCHEMA], status: String(status), ...(scimType ? { scimType } : {}), detail };
}

export const invalidFilter = (detail: string): ScimError => new ScimError(400, 'invalidFilter', detail);
export const invalidValue = (detail: string): ScimError => new ScimError(400, 'invalidValue', detail);
export const invalidSyntax = (detail: string): ScimError => new ScimError(400, 'invalidSyntax', detail);
export const scimNotFound = (what: string): ScimError => new ScimError(404, undefined, `${what} not found.`);
export const scimUnauthorized = (): ScimError =>
  new ScimError(401, undefined, 'A valid SCIM token of this instance is required.', { 'www-authenticate': 'Bearer realm="scim"' });

/** The `scimType` of the stable codes of the object layer and the pipeline. */
const SCIM_TYPES: Readonly<Record<string, ScimType>> = {
  UserNameTaken: 'uniqueness',
  ExternalIdTaken: 'uniqueness',
  DuplicateName: 'uniqueness',
  CardIsAlreadyAssigned: 'uniqueness',
  InvalidJson: 'invalidSyntax',
  ValidationFailed: 'invalidValue',
  WrongType: 'invalidValue',
  MissingType: 'invalidValue',
  InvalidRelation: 'invalidValue',
};

const isScimPath = (request: PipelineRequest): boolean => (request.event.rawPath ?? '').startsWith('/scim/');

/**
 * SCIM answers, for the SCIM routes of a family: every body labelled `application/scim+json`,
 * every error in SCIM's error body. The family's outermost step: it sees the answer once the
 * pipeline's error handler has written it.
 */
export function scimAnswers(): PipelineMiddleware {
  const relabel = (request: PipelineRequest) => {
    const res = request.response;
    if (!res || !isScimPath(request) || !res.body) return;
    res.headers = { ...res.headers, 'content-type': SCIM_CONTENT_TYPE };
  };
  return {
    after: relabel,
    onError: function scimError(request: PipelineRequest) {
      const res = request.response;
      if (!res || !isScimPath(request)) return;
      const err = request.error;
      if (!(err instanceof ScimError) && typeof res.body === 'string' && res.body !== '') {
        const body = parseJson(res.body) as Record<string, unknown>;
        const code = err instanceof ApiError ? err.code : String(body.Error ?? body.error ?? '');
        const detail = String(body.Message ?? body.error_description ?? '');
        const status = res.statusCode ?? 500;
        res.body = stringifyJson(scimErrorBody(status, status === 400 || status === 409 ? (SCIM_TYPES[code] ?? (status === 400 ? 'invalidValue' : undefined)) : undefined, detail));
      }
      relabel(request);
    },
  };
}
