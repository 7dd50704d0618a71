/**
 * `GET /api/openapi.json`: the document `npm run openapi` wrote to docs/openapi.json (built from
 * the route table and the model's schemas at build time), with `servers` naming the deployment
 * that answers: its configured public base URL (`GATEHOUSE_PUBLIC_URL`), else the host the request
 * called. The second comes from a request header anyone can set, so that answer is for its
 * requester only (`private`, `Vary: Host`): a shared cache must not hand one client's forged host
 * to every reader of the reference page.
 *
 * The document is a file, not an import: in AWS it is copied beside the service function's code
 * (infra/bundling.ts `familyFiles`), locally it is read from docs/. Read on the first request, so
 * the service function's bundle and cold start do not grow with the API.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { ApiRequest } from '../http/operation-contract.ts';

/** The file name of the document beside the function's code. */
export const DOCUMENT_ASSET = 'openapi.json';

/** The checked-in document in the repository. */
export const repositoryDocument = (): string => fileURLToPath(new URL('../../docs/openapi.json', import.meta.url));

/** Browsers and proxies may keep it for five minutes; a deployment changes it. */
const DOCUMENT_CACHE_CONTROL = 'public, max-age=300';
/** The document naming the host the request called: the requester's browser may keep it, no shared cache. */
const PER_HOST_CACHE_CONTROL = 'private, max-age=300';

const HOST = /^[A-Za-z0-9.-]+(?::\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](?::\d{1,5})?$/;

/**
 * The base URL the client called: API Gateway sets `x-forwarded-proto`; the local runtime is
 * plain HTTP. A host header that is not a host name gives the relative server `/`.
 */
export function baseUrlOf(req: Pick<ApiRequest, 'headers'>): string {
  const host = req.headers.host;
  if (!host || !HOST.test(host)) return '/';
  const proto = req.headers['x-forwarded-proto']?.split(',')[0]?.trim().toLowerCase();
  return `${proto === 'https' ? 'https' : 'http'}://${host}`;
}

let document: Record<string, unknown> | undefined;

function loadDocument(): Record<string, unknown> {
  if (!document) {
    const beside = fileURLToPath(new URL(`./${DOCUMENT_ASSET}`, import.meta.url));
    document = JSON.parse(readFileSync(existsSync(beside) ? beside : repositoryDocument(), 'utf8')) as Record<string, unknown>;
  }
  return document;
}

const served = new Map<string, string>();

/** The document's text and the headers it is answered with. */
export interface ServedDocument {
  readonly text: string;
  readonly headers: Readonly<Record<string, string>>;
}

/**
 * The document, serialised once per base URL (a handful per execution environment), naming
 * `publicUrl` when configured, else the request's host (see the module comment).
 */
export function servedDocument(req: Pick<ApiRequest, 'headers'>, publicUrl: string | undefined): ServedDocument {
  const url = publicUrl ? publicUrl.replace(/\/+$/, '') : baseUrlOf(req);
  let text = served.get(url);
  if (text === undefined) {
    text = JSON.stringify({ ...loadDocument(), servers: [{ url, description: 'The deployment that answered this request.' }] });
    if (served.size < 16) served.set(url, text);
  }
  return {
    text,
    headers: publicUrl
      ? { 'cache-control': DOCUMENT_CACHE_CONTROL }
      : { 'cache-control': PER_HOST_CACHE_CONTROL, vary: 'Host, X-Forwarded-Proto' },
  };
}
