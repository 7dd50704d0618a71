/** The shape of an operation's description in the OpenAPI document (operations.ts, scim.ts). */
import type * as z from 'zod';
import type { CollectionDef } from '#shared/model/collections.ts';
import type { Route } from '#shared/routes.ts';

/** A success response of an operation. */
export interface SuccessDoc {
  readonly description: string;
  /** Absent: no body (204). */
  readonly schema?: z.ZodType;
  readonly example?: unknown;
  /** A media type other than JSON (the documentation page). */
  readonly mediaType?: string;
  readonly headers?: Readonly<Record<string, string>>;
}

export interface BodyDoc {
  readonly schema: z.ZodType;
  readonly example: unknown;
  readonly required: boolean;
  readonly description?: string;
  /** `POST /token`: form fields (JSON accepted too). */
  readonly form?: boolean;
  /** The media types the body is read in (default: JSON). */
  readonly mediaTypes?: readonly string[];
}

export interface OperationDoc {
  readonly summary: string;
  readonly description?: string;
  readonly tag?: string;
  readonly query?: Readonly<Record<string, z.ZodType>>;
  readonly body?: BodyDoc;
  /** Status → success response (2xx). */
  readonly success: Readonly<Record<number, SuccessDoc>>;
  /** Error statuses besides those every route of its kind can give (see document.ts). */
  readonly errors?: readonly number[];
  /** The error body of this operation's 400 is the token error body. */
  readonly tokenErrors?: boolean;
  /** The login throttle answers this operation's 429, in the token error body (implied by `tokenErrors`). */
  readonly loginThrottle?: boolean;
  /** This operation's 400 is an HTML page for a browser (described by this text), not a JSON body. */
  readonly htmlError?: string;
  /** Public documentation routes: cacheable. */
  readonly cacheable?: boolean;
  /** A SCIM call (openapi/scim.ts): a SCIM token, SCIM's error body. */
  readonly scim?: boolean;
}

export interface OperationContext {
  readonly route: Route;
  readonly collection: CollectionDef | undefined;
}

