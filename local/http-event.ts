/**
 * Turns a `node:http` request into the API Gateway HTTP API payload 2.0 event, and a handler's
 * result back into a response, following what API Gateway does:
 *
 * - header names lower-case, repeated headers comma-joined, cookies moved to `cookies`;
 * - `rawQueryString` as sent; `queryStringParameters` decoded, repeated values comma-joined;
 * - bodies as UTF-8 text for text/*, JSON, XML and JavaScript content types, base64 with
 *   `isBase64Encoded: true` for everything else (a missing Content-Type included);
 * - GET bodies are kept (two calls of the spec send one).
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { RouteMatch } from '#shared/http/router.ts';
import { routeKey } from '#shared/routes.ts';

const TEXT_TYPE = /^(text\/[^;]+|[^/;]+\/([^;]*[+.-])?(json|xml|javascript|ecmascript)|application\/x-javascript)\s*(;|$)/i;

/** Whether API Gateway passes a body of this Content-Type as text (otherwise base64). */
export function isTextContentType(contentType: string | undefined): boolean {
  return contentType !== undefined && TEXT_TYPE.test(contentType.trim());
}

/** The path and the query string of a request target, both as sent. */
export function splitTarget(target: string): { rawPath: string; rawQueryString: string } {
  const hash = target.indexOf('#');
  const t = hash < 0 ? target : target.slice(0, hash);
  const q = t.indexOf('?');
  return q < 0 ? { rawPath: t || '/', rawQueryString: '' } : { rawPath: t.slice(0, q) || '/', rawQueryString: t.slice(q + 1) };
}

/** Query parameters with repeated values comma-joined, or undefined when there are none. */
export function queryParameters(rawQueryString: string): Record<string, string> | undefined {
  if (!rawQueryString) return undefined;
  const params = new URLSearchParams(rawQueryString);
  const out: Record<string, string> = {};
  for (const k of new Set(params.keys())) out[k] = params.getAll(k).join(',');
  return Object.keys(out).length ? out : undefined;
}

/** Header names lower-case (or as sent, for WebSocket events), repeated values comma-joined. */
export function headersOf(req: IncomingMessage, keepCase = false): Record<string, string> {
  const out: Record<string, string> = {};
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = keepCase ? raw[i]! : raw[i]!.toLowerCase();
    out[name] = name in out ? `${out[name]},${raw[i + 1]!}` : raw[i + 1]!;
  }
  return out;
}

export function sourceIpOf(req: IncomingMessage): string {
  const ip = req.socket.remoteAddress ?? '127.0.0.1';
  return ip.startsWith('::ffff:') ? ip.slice(7) : ip;
}

export interface HttpEventInput {
  readonly req: IncomingMessage;
  readonly body: Buffer | undefined;
  readonly match: RouteMatch;
  readonly domainName: string;
  readonly requestId?: string;
  /** The request target split (the server has split it already). @default splitTarget(req.url) */
  readonly target?: { readonly rawPath: string; readonly rawQueryString: string };
}

export function toHttpEvent({ req, body, match, domainName, requestId = randomUUID(), target }: HttpEventInput): APIGatewayProxyEventV2 {
  const { rawPath, rawQueryString } = target ?? splitTarget(req.url ?? '/');
  const headers = headersOf(req);
  const cookies = headers.cookie
    ?.split(';')
    .map((c) => c.trim())
    .filter(Boolean);
  delete headers.cookie;
  const key = routeKey(match.route);
  const now = new Date();
  const queryStringParameters = queryParameters(rawQueryString);
  const pathParameters = Object.keys(match.params).length ? { ...match.params } : undefined;
  const hasBody = body !== undefined && body.length > 0;
  const text = hasBody && isTextContentType(headers['content-type']);
  return {
    version: '2.0',
    routeKey: key,
    rawPath,
    rawQueryString,
    ...(cookies?.length ? { cookies } : {}),
    headers,
    ...(queryStringParameters ? { queryStringParameters } : {}),
    ...(pathParameters ? { pathParameters } : {}),
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      domainName,
      domainPrefix: domainName.split('.')[0]!,
      http: {
        method: (req.method ?? 'GET').toUpperCase(),
        path: rawPath,
        protocol: `HTTP/${req.httpVersion}`,
        sourceIp: sourceIpOf(req),
        userAgent: headers['user-agent'] ?? '',
      },
      requestId,
      routeKey: key,
      stage: '$default',
      time: clfTime(now),
      timeEpoch: now.getTime(),
    },
    ...(hasBody ? { body: text ? body.toString('utf8') : body.toString('base64') } : {}),
    isBase64Encoded: hasBody && !text,
  };
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** The last second formatted: every request within a second carries the same text. */
let lastClf = { second: Number.NaN, text: '' };

/** `22/Nov/2025:06:04:05 +0000`, the format of `requestContext.time`. */
export function clfTime(d: Date): string {
  const second = Math.floor(d.getTime() / 1000);
  if (second === lastClf.second) return lastClf.text;
  const p = (n: number) => String(n).padStart(2, '0');
  const text = `${p(d.getUTCDate())}/${MONTHS[d.getUTCMonth()]}/${d.getUTCFullYear()}:${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())} +0000`;
  lastClf = { second, text };
  return text;
}

/**
 * Writes a handler's result. A structured result (`statusCode`) is written as is; any other value
 * is sent as a 200 JSON body, as API Gateway does for payload 2.0.
 */
export function writeResult(res: ServerResponse, result: unknown, extraHeaders: Record<string, string> = {}): void {
  const structured = result !== null && typeof result === 'object' && 'statusCode' in result;
  const r: APIGatewayProxyStructuredResultV2 = structured
    ? (result as APIGatewayProxyStructuredResultV2)
    : { statusCode: 200, headers: { 'content-type': 'application/json' }, body: typeof result === 'string' ? result : JSON.stringify(result ?? null) };
  const headers: Record<string, string | string[]> = { ...extraHeaders };
  for (const [k, v] of Object.entries(r.headers ?? {})) headers[k.toLowerCase()] = String(v);
  if (r.cookies?.length) headers['set-cookie'] = r.cookies;
  delete headers['content-length'];
  delete headers['transfer-encoding'];
  const status = r.statusCode ?? 200;
  // Text goes out as is (no copy into a Buffer first); base64 is decoded.
  const body: string | Buffer = !r.body ? '' : r.isBase64Encoded ? Buffer.from(r.body, 'base64') : r.body;
  const noBody = status === 204 || status === 304 || (status >= 100 && status < 200);
  if (!noBody) headers['content-length'] = String(typeof body === 'string' ? Buffer.byteLength(body) : body.length);
  res.writeHead(status, headers);
  res.end(noBody ? undefined : body);
}

/** Writes a JSON resource error (`{"Error", "Message"}`). */
export function writeJsonError(res: ServerResponse, status: number, code: string, message: string, headers: Record<string, string> = {}): void {
  const body = JSON.stringify({ Error: code, Message: message });
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': String(Buffer.byteLength(body)), ...headers });
  res.end(body);
}
