/**
 * One error hierarchy. Every error the service answers with is an {@link ApiError}: a stable
 * code, an HTTP status and a public message. The pipeline's error handler renders it; anything
 * that is not an ApiError becomes a generic 500 and is logged with its cause.
 */

/** Resource errors render as `{"Error": code, "Message": message}` (the spec's body). */
export class ApiError extends Error {
  /** Extra response headers (Allow, Retry-After, ...). */
  readonly headers: Readonly<Record<string, string>>;
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ApiError';
    this.headers = headers;
  }

  /** Below 500 the message is for the client; at 500 and above only a generic text is. */
  get expose(): boolean {
    return this.status < 500;
  }

  toBody(): Record<string, string> {
    return { Error: this.code, Message: this.message };
  }
}

/**
 * OAuth-style errors (`{"error": code, "error_description": text}`): the token endpoint's errors
 * and `unauthorized` for a protected call without a valid token.
 */
export class OAuthError extends ApiError {
  constructor(code: string, description: string, status = 400) {
    super(status, code, description);
    this.name = 'OAuthError';
  }

  override toBody(): Record<string, string> {
    return { error: this.code, error_description: this.message };
  }
}

export const badRequest = (code: string, message: string): ApiError => new ApiError(400, code, message);
export const validationFailed = (message: string): ApiError => new ApiError(400, 'ValidationFailed', message);
export const forbidden = (message = 'You do not have access to this resource.'): ApiError =>
  new ApiError(403, 'Forbidden', message);
export const notFound = (message = 'The resource does not exist.', code = 'NotFound'): ApiError =>
  new ApiError(404, code, message);
export const conflict = (code: string, message: string): ApiError => new ApiError(409, code, message);
export const methodNotAllowed = (allow: string): ApiError =>
  new ApiError(405, 'MethodNotAllowed', `This resource only accepts ${allow}.`, { Allow: allow });
export const unauthorized = (description = 'A valid bearer token is required.'): OAuthError =>
  new OAuthError('unauthorized', description, 401);
export const serviceUnavailable = (retryAfterSeconds = 1): ApiError =>
  new ApiError(503, 'ServiceUnavailable', 'The service is busy; retry shortly.', {
    'Retry-After': String(retryAfterSeconds),
  });
/** The stage's request rate is exceeded (API Gateway's throttling, played by the local runtime). */
export const tooManyRequests = (retryAfterSeconds = 1): ApiError =>
  new ApiError(429, 'TooManyRequests', 'Too many requests; retry after the number of seconds in Retry-After.', {
    'Retry-After': String(retryAfterSeconds),
  });
export const internalError = (): ApiError =>
  new ApiError(500, 'InternalError', 'An unexpected error occurred.');

/** Raised by the repository when a write's condition fails; domain code maps it to a 409. */
export class ConditionFailed extends Error {
  constructor(
    message: string,
    /** For transactions: the index of each failed item's condition, with its reason code. */
    readonly reasons: ReadonlyArray<{ index: number; code: string }> = [],
  ) {
    super(message);
    this.name = 'ConditionFailed';
  }
}

/** Raised by the repository when DynamoDB stays throttled or unavailable after retries. */
export class StoreUnavailable extends Error {
  constructor(cause: unknown) {
    super('The data store is unavailable.', { cause });
    this.name = 'StoreUnavailable';
  }
}
