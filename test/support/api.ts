/**
 * Calls the real family handlers in-process, as API Gateway would: builds an HTTP API v2 event,
 * picks the family from the route table, and parses the answer. Integration tests use it with
 * dependencies pointing at DynamoDB Local. Every answer is checked against the OpenAPI document
 * (status, Content-Type, body): one it does not describe throws, failing the test that got it.
 */
import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import type { BaseDeps } from '#shared/http/operation-contract.ts';
import { Router } from '#shared/http/router.ts';
import type { Family } from '#shared/model/collections.ts';
import { routeKey } from '#shared/routes.ts';
import { assertDocumented } from './openapi-validator.ts';

export interface CallOptions {
  readonly query?: Record<string, string | number | boolean | readonly (string | number)[]>;
  readonly headers?: Record<string, string>;
  /** Sent as JSON unless it is a string (then sent as is). */
  readonly body?: unknown;
  readonly token?: string;
  readonly contentType?: string;
}

export interface CallResult {
  readonly status: number;
  readonly headers: Record<string, string>;
  /** Parsed JSON, or undefined for an empty body. */
  readonly body: any;
  readonly text: string;
}

/** The route table compiled once: building a Router is about 0.1 ms, more than a warm handler's own work. */
const router = new Router();

export function httpEvent(method: string, path: string, opts: CallOptions = {}): APIGatewayProxyEventV2 {
  const [rawPath, inlineQuery = ''] = path.split('?') as [string, string?];
  const params = new URLSearchParams(inlineQuery);
  for (const [k, v] of Object.entries(opts.query ?? {})) {
    for (const one of Array.isArray(v) ? v : [v]) params.append(k, String(one));
  }
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(opts.headers ?? {})) headers[k.toLowerCase()] = v;
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  let body: string | undefined;
  if (opts.body !== undefined) {
    body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
    headers['content-type'] ??= opts.contentType ?? 'application/json';
  }
  const match = router.match(method, rawPath);
  const queryStringParameters: Record<string, string> = {};
  for (const [k] of params) queryStringParameters[k] = params.getAll(k).join(',');
  return {
    version: '2.0',
    routeKey: match ? routeKey(match.route) : '$default',
    rawPath,
    rawQueryString: params.toString(),
    headers,
    queryStringParameters,
    pathParameters: match?.params ? { ...match.params } : undefined,
    requestContext: {
      accountId: 'local',
      apiId: 'local',
      domainName: 'localhost',
      domainPrefix: 'localhost',
      http: { method, path: rawPath, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'vitest' },
      requestId: randomUUID(),
      routeKey: match ? routeKey(match.route) : '$default',
      stage: '$default',
      time: new Date().toISOString(),
      timeEpoch: Date.now(),
    },
    body,
    isBase64Encoded: false,
  };
}

export const lambdaContext = (): Context =>
  ({
    awsRequestId: randomUUID(),
    functionName: 'test',
    getRemainingTimeInMillis: () => 30_000,
  }) as unknown as Context;

type FamilyModule = { createHandler: (deps: () => BaseDeps) => (e: APIGatewayProxyEventV2, c: Context) => Promise<APIGatewayProxyStructuredResultV2> };

/** An in-process client of every HTTP family, sharing one set of dependencies. */
export function createApi<D extends BaseDeps>(deps: D) {
  const handlers = new Map<Family, Promise<ReturnType<FamilyModule['createHandler']>>>();
  const handlerFor = (family: Family) => {
    let h = handlers.get(family);
    if (!h) {
      h = (import(`../../functions/${family}/handler.ts`) as Promise<FamilyModule>).then((m) => m.createHandler(() => deps));
      handlers.set(family, h);
    }
    return h;
  };
  async function call(method: string, path: string, opts: CallOptions = {}): Promise<CallResult> {
    const event = httpEvent(method, path, opts);
    const match = router.match(method, event.rawPath);
    const handler = await handlerFor(match?.route.family ?? 'service');
    const res = await handler(event, lambdaContext());
    const text = res.body ?? '';
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(res.headers ?? {})) headers[k.toLowerCase()] = String(v);
    const status = res.statusCode ?? 200;
    assertDocumented({ method, path: event.rawPath, status, contentType: headers['content-type'], text });
    let body: unknown;
    if (text) {
      try {
        body = JSON.parse(text);
      } catch {
        body = undefined;
      }
    }
    return { status, headers, body, text };
  }
  return {
    call,
    get: (path: string, opts?: CallOptions) => call('GET', path, opts),
    post: (path: string, opts?: CallOptions) => call('POST', path, opts),
    put: (path: string, opts?: CallOptions) => call('PUT', path, opts),
    del: (path: string, opts?: CallOptions) => call('DELETE', path, opts),
  };
}
