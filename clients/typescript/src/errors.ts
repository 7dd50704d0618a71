/**
 * The one error the client throws for an answer that is not 2xx: the HTTP status, the stable
 * code the body names (`Error` of a resource error, `error` of a token error) and its message.
 */
export class GatehouseError extends Error {
  override readonly name = 'GatehouseError';

  constructor(
    /** The HTTP status (400, 401, 403, 404, 409, 429, 503, ...). */
    readonly status: number,
    /** The stable code: `NotFound`, `ValidationFailed`, `RefreshTokenTicketNotValid`, ...; `HttpError` when the body names none. */
    readonly code: string,
    message: string,
    /** The body as answered (parsed when it was JSON). */
    readonly body: unknown = undefined,
    /** Seconds to wait before retrying, from `Retry-After` (429 and 503 answers). */
    readonly retryAfterSeconds: number | undefined = undefined,
  ) {
    super(message);
  }

  /** The error of a non-2xx `response` whose body was read as `body`. */
  static from(response: Response, body: unknown): GatehouseError {
    const retryAfter = Number.parseInt(response.headers.get('retry-after') ?? '', 10);
    const [code, message] = codeAndMessage(body) ?? ['HttpError', `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}`];
    return new GatehouseError(response.status, code, message, body, Number.isFinite(retryAfter) ? retryAfter : undefined);
  }
}

/** The code and message of the spec's two error bodies: `{Error, Message}` and `{error, error_description}`. */
function codeAndMessage(body: unknown): [string, string] | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const b = body as Record<string, unknown>;
  if (typeof b.Error === 'string') return [b.Error, typeof b.Message === 'string' ? b.Message : b.Error];
  if (typeof b.error === 'string') return [b.error, typeof b.error_description === 'string' ? b.error_description : b.error];
  return undefined;
}
