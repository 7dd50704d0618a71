/**
 * Checks responses against the OpenAPI document (docs/openapi.json): the status is one the
 * operation declares, the `Content-Type` is one declared for that status (no body where none is
 * declared), and the body is valid against the declared schema (Ajv, JSON Schema 2020-12, formats
 * on). The operation is found as the handlers find it: the route table's router matches the
 * request, so precedence (a literal segment over a `{param}`) is the same.
 *
 * A validator counts what it checked per operation; `report()` also lists the operations it never
 * saw, so a suite can print what its responses covered. The call helpers every test uses
 * (`api.ts`, `field-client.ts`, `documented-fetch.ts`) check through one validator per test file,
 * {@link sharedValidator}, with {@link assertDocumented}: a mismatch fails the test that received
 * it, and `openapi-coverage-setup.ts` hands that validator's counts to the run's report.
 */
import { readFileSync } from 'node:fs';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { Router } from '#shared/http/router.ts';
import { DOCUMENT_PATH } from '../../openapi/paths.ts';

type Json = Record<string, any>;

/** A response as a test received it. */
export interface ObservedResponse {
  readonly method: string;
  /** The request path, without the query string. */
  readonly path: string;
  readonly status: number;
  readonly contentType: string | undefined;
  /** The body as text (empty when there was none). */
  readonly text: string;
}

export interface Mismatch {
  readonly operationId: string;
  readonly request: string;
  readonly status: number;
  readonly problem: string;
}

const DOC_ID = 'https://gatehouse.invalid/openapi.json';

/** `/` and `~` escaped for a JSON pointer segment. */
const pointerSegment = (s: string): string => s.replace(/~/g, '~0').replace(/\//g, '~1');

export class OpenApiValidator {
  private readonly doc: Json;
  private readonly ajv: Ajv2020;
  private readonly router = new Router();
  private readonly compiled = new Map<string, ValidateFunction>();
  /** operationId → responses validated. */
  readonly counts = new Map<string, number>();
  readonly mismatches: Mismatch[] = [];

  constructor(doc: Json = JSON.parse(readFileSync(DOCUMENT_PATH, 'utf8'))) {
    this.doc = doc;
    // OpenAPI keywords (discriminator, example) are annotations here; `examples` is JSON Schema's.
    this.ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: true });
    addFormats.default(this.ajv);
    this.ajv.addSchema({ ...doc, $id: DOC_ID });
  }

  /** Every operationId of the document, with its method and path. */
  operations(): Array<{ operationId: string; method: string; path: string }> {
    return Object.entries(this.doc.paths as Json).flatMap(([path, ops]) =>
      Object.entries(ops as Json).map(([method, op]) => ({ operationId: op.operationId as string, method, path })),
    );
  }

  private resolve(x: Json): Json {
    if (!x?.$ref) return x;
    return (x.$ref as string).slice(2).split('/').reduce((o: Json, k) => o[k.replace(/~1/g, '/').replace(/~0/g, '~')], this.doc);
  }

  private schemaValidator(pointer: string): ValidateFunction {
    let v = this.compiled.get(pointer);
    if (!v) {
      v = this.ajv.compile({ $ref: `${DOC_ID}#${pointer}` });
      this.compiled.set(pointer, v);
    }
    return v;
  }

  /**
   * The operation the route table routes a request to, or undefined for a request no operation
   * matches (the `$default` route's 404, which the document does not describe).
   */
  operationOf(method: string, path: string): string | undefined {
    const match = this.router.match(method, path);
    if (!match || match.route.path === '$default') return undefined;
    const m = match.route.method === 'ANY' ? 'get' : match.route.method.toLowerCase();
    return this.doc.paths[match.route.path]?.[m]?.operationId as string | undefined;
  }

  /**
   * Problems of a request body against the request schema of the operation at `path` (a path
   * template of the document) and `method` for `mediaType`: none when it is valid.
   */
  requestBodyProblems(method: string, path: string, body: unknown, mediaType = 'application/json'): string[] {
    const m = method.toLowerCase();
    if (!this.doc.paths[path]?.[m]?.requestBody?.content?.[mediaType]) return [`${method} ${path} takes no ${mediaType} body`];
    const validate = this.schemaValidator(`/paths/${pointerSegment(path)}/${m}/requestBody/content/${pointerSegment(mediaType)}/schema`);
    return validate(body) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || '(body)'} ${e.message}`);
  }

  /** Checks one response; returns the problems found (also kept in `mismatches`). */
  check(r: ObservedResponse): string[] {
    const request = `${r.method.toUpperCase()} ${r.path}`;
    const match = this.router.match(r.method, r.path);
    if (!match || match.route.path === '$default') return this.fail('(none)', request, r.status, 'no operation of the document matches');
    const method = match.route.method === 'ANY' ? 'get' : match.route.method.toLowerCase();
    const op = this.doc.paths[match.route.path]?.[method];
    if (!op) return this.fail('(none)', request, r.status, `${method} ${match.route.path} is not in the document`);
    const id = op.operationId as string;
    this.counts.set(id, (this.counts.get(id) ?? 0) + 1);

    const declared = op.responses[String(r.status)];
    if (!declared) return this.fail(id, request, r.status, `status ${r.status} is not declared (declared: ${Object.keys(op.responses).join(', ')})`);
    const response = this.resolve(declared);
    const responsePointer = declared.$ref
      ? (declared.$ref as string).slice(1)
      : `/paths/${pointerSegment(match.route.path)}/${method}/responses/${r.status}`;
    const content = (response.content ?? {}) as Json;
    const media = Object.keys(content);
    if (media.length === 0) return r.text.length > 0 ? this.fail(id, request, r.status, `a body where none is declared: ${r.text.slice(0, 200)}`) : [];

    const type = (r.contentType ?? '').split(';')[0]!.trim().toLowerCase();
    if (!media.includes(type)) return this.fail(id, request, r.status, `Content-Type "${r.contentType}" is not declared (declared: ${media.join(', ')})`);
    if (type !== 'application/json') return [];
    let body: unknown;
    try {
      body = JSON.parse(r.text);
    } catch {
      return this.fail(id, request, r.status, `the body is not JSON: ${r.text.slice(0, 200)}`);
    }
    const validate = this.schemaValidator(`${responsePointer}/content/${pointerSegment(type)}/schema`);
    if (validate(body)) return [];
    const errors = (validate.errors ?? []).map((e) => `${e.instancePath || '(body)'} ${e.message}`).join('; ');
    return this.fail(id, request, r.status, `the body does not match the schema: ${errors}`);
  }

  private fail(operationId: string, request: string, status: number, problem: string): string[] {
    this.mismatches.push({ operationId, request, status, problem });
    return [problem];
  }

  /** Responses validated per operation, and the operations no response exercised. */
  report(): { validated: Record<string, number>; unexercised: string[]; mismatches: readonly Mismatch[] } {
    const validated = Object.fromEntries([...this.counts].sort(([a], [b]) => a.localeCompare(b)));
    const unexercised = this.operations()
      .filter((o) => !this.counts.has(o.operationId))
      .map((o) => `${o.operationId} (${o.method.toUpperCase()} ${o.path})`);
    return { validated, unexercised, mismatches: this.mismatches };
  }
}

/** A response that the OpenAPI document does not describe. */
export class OpenApiMismatchError extends Error {
  constructor(
    readonly operationId: string,
    readonly response: ObservedResponse,
    readonly problems: readonly string[],
  ) {
    super(
      `The OpenAPI document does not describe this answer: ${operationId} (${response.method.toUpperCase()} ${response.path}) → ${response.status}: ` +
        `${problems.join('; ')}\n  body: ${response.text.slice(0, 500)}`,
    );
    this.name = 'OpenApiMismatchError';
  }
}

let shared: OpenApiValidator | undefined;

/**
 * The validator of this test file's call helpers (each test file has its own module graph, so
 * its own counts).
 */
export function sharedValidator(): OpenApiValidator {
  shared ??= new OpenApiValidator();
  return shared;
}

/** The shared validator if this test file's helpers checked anything, without loading the document otherwise. */
export const sharedValidatorIfUsed = (): OpenApiValidator | undefined => shared;

/**
 * Checks a response a call helper received against the document and throws an
 * {@link OpenApiMismatchError} (operation, status, Ajv errors) when it does not match. A request
 * that no operation routes (an unknown path, answered by the `$default` 404) is not checked.
 */
export function assertDocumented(r: ObservedResponse): void {
  const v = sharedValidator();
  const operationId = v.operationOf(r.method, r.path);
  if (!operationId) return;
  const problems = v.check(r);
  if (problems.length > 0) throw new OpenApiMismatchError(operationId, r, problems);
}
