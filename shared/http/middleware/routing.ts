/**
 * Finds the request's route and operation (404 for none, or for another family's) and builds the
 * {@link ApiRequest} the later steps fill: path parameters, query and lower-case headers.
 */
import { notFound } from '../../errors.ts';
import type { Family } from '../../model/collections.ts';
import { Router, matchOf } from '../router.ts';
import { requiredState, type HttpEvent, type PipelineMiddleware, type PipelineRequest } from './state.ts';

const router = new Router();

function parseQuery(raw: string | undefined): Record<string, string[]> {
  // Client-chosen names: no prototype, so `?toString=1` or `?__proto__=1` is just a parameter.
  const query: Record<string, string[]> = Object.create(null);
  if (!raw) return query;
  for (const [k, v] of new URLSearchParams(raw)) (query[k] ??= []).push(v);
  return query;
}

function lowerHeaders(h: HttpEvent['headers'] | undefined): Record<string, string> {
  const out: Record<string, string> = Object.create(null);
  if (!h) return out;
  for (const k in h) {
    const v = h[k];
    if (v !== undefined && Object.hasOwn(h, k)) out[k.toLowerCase()] = v;
  }
  return out;
}

export function routing(family: Family): PipelineMiddleware {
  return {
    before: function route(request: PipelineRequest) {
      const s = requiredState(request.event);
      const event = request.event;
      const method = event.requestContext?.http?.method ?? 'GET';
      const path = event.rawPath ?? event.requestContext?.http?.path ?? '/';
      // The local runtime has matched this very event already (API Gateway's routing): reuse it.
      const match = matchOf(event, method, path) ?? router.match(method, path);
      if (!match || match.route.family !== family) {
        // Only `$default` and misrouted calls land here: answer as an unknown route.
        throw notFound(`No resource at ${method} ${path}.`);
      }
      s.operation = match.route.operation;
      const headers = lowerHeaders(event.headers);
      s.req = {
        requestId: s.requestId,
        method,
        path,
        route: match.route,
        params: match.params,
        query: parseQuery(event.rawQueryString),
        headers,
        cookies: cookiesOf(event.cookies),
        body: undefined,
        rawBody: undefined,
        principal: undefined,
        sourceIp: event.requestContext?.http?.sourceIp,
      };
    },
  };
}

/** API Gateway's `cookies` (`name=value` each, the `Cookie` header split) by name; the first of a name wins. */
function cookiesOf(list: readonly string[] | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const c of list ?? []) {
    const eq = c.indexOf('=');
    if (eq <= 0) continue;
    const name = c.slice(0, eq).trim();
    if (!Object.hasOwn(out, name)) out[name] = c.slice(eq + 1).trim();
  }
  return out;
}
