/** Renders an operation's answer or an error as an API Gateway v2 result, with the CORS headers an origin may read. */
import type { ApiError } from '../../errors.ts';
import { stringifyJson } from '../../json.ts';
import type { ApiResponse } from '../operation-contract.ts';
import type { HttpResult } from './state.ts';

/**
 * The answer headers a browser page of an allowed origin may read beyond the CORS-safelisted ones:
 * where a created object is, when to retry, and the rate limits left.
 */
const EXPOSED_HEADERS = 'Location, Retry-After, RateLimit, RateLimit-Policy';

/** CORS is closed unless GATEHOUSE_CORS_ORIGINS names the origin (or `*`). */
export function corsHeaders(allowed: readonly string[], origin: string | undefined): Record<string, string> {
  if (!origin || allowed.length === 0) return {};
  if (allowed.includes('*') || allowed.includes(origin)) return { 'access-control-allow-origin': origin, 'access-control-expose-headers': EXPOSED_HEADERS, vary: 'Origin' };
  return {};
}

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8' };

/** Renders an operation's result or an error as an API Gateway v2 result. */
export function serialize(res: ApiResponse, corsHeaders: Record<string, string> = {}): HttpResult {
  const headers: Record<string, string> = { ...corsHeaders, ...(res.headers ?? {}) };
  const cookies = res.cookies?.length ? { cookies: [...res.cookies] } : {};
  if (res.raw) return { statusCode: res.status, headers, ...cookies, body: res.raw.text, isBase64Encoded: res.raw.base64 ?? false };
  if (res.status === 204 || res.body === undefined) return { statusCode: res.status, headers, ...cookies, body: '' };
  return {
    statusCode: res.status,
    ...cookies,
    headers: { ...JSON_HEADERS, ...headers },
    body: stringifyJson(res.body),
  };
}

/** An ApiError as an answer. */
export function errorResponse(err: ApiError): ApiResponse {
  return { status: err.status, body: err.toBody(), headers: err.headers };
}
