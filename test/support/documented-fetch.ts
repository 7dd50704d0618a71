/**
 * HTTP calls of the end-to-end and reliability tests with every answer checked against the
 * OpenAPI document (declared status, declared Content-Type, body valid against the schema): an
 * answer it does not describe throws an `OpenApiMismatchError`, failing the test that got it.
 * `documentedFetch` is `fetch` (the caller still reads the body); `documentedRequest` uses
 * node:http, for the calls that send a body with GET.
 */
import { request } from 'node:http';
import { assertDocumented } from './openapi-validator.ts';

/** `fetch`, checking the answer against the document before handing it back unread. */
export async function documentedFetch(input: string | URL, init: RequestInit = {}): Promise<Response> {
  const res = await fetch(input, init);
  const text = await res.clone().text();
  assertDocumented({
    method: init.method ?? 'GET',
    path: new URL(input).pathname,
    status: res.status,
    contentType: res.headers.get('content-type') ?? undefined,
    text,
  });
  return res;
}

export interface RawAnswer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly contentType: string | undefined;
  /** The body as sent. */
  readonly text: string;
}

/** One request over node:http (a GET may carry a body), its answer checked against the document. */
export function documentedRequest(
  url: string,
  opts: { readonly method?: string; readonly headers?: Record<string, string>; readonly body?: string | Buffer } = {},
): Promise<RawAnswer> {
  const method = opts.method ?? 'GET';
  const data = opts.body === undefined ? undefined : Buffer.from(opts.body);
  const headers = { ...opts.headers, ...(data ? { 'content-length': String(data.length) } : {}) };
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const answer = { status: res.statusCode ?? 0, headers: res.headers, contentType: res.headers['content-type'], text: Buffer.concat(chunks).toString('utf8') };
        try {
          assertDocumented({ method, path: new URL(url).pathname, ...answer });
          resolve(answer);
        } catch (err) {
          reject(err);
        }
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(data);
  });
}
