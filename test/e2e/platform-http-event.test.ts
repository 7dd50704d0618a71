/**
 * How the local runtime turns a real `node:http` request into an API Gateway HTTP API payload
 * 2.0 event, and a handler's result into a response; and how it loads family handlers.
 */
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Router } from '#shared/http/router.ts';
import type { Family } from '#shared/model/collections.ts';
import { isTextContentType, toHttpEvent, writeResult } from '#local/http-event.ts';
import { FamilyLoader, FamilyMissing } from '#local/lambda.ts';

let server: Server;
let base: string;
/** What the test server answers with, given the event it built. */
let respond: (event: APIGatewayProxyEventV2) => unknown = (event) => ({ statusCode: 200, body: JSON.stringify(event) });

beforeAll(async () => {
  const router = new Router();
  server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = chunks.length ? Buffer.concat(chunks) : undefined;
    const match = router.match(req.method ?? 'GET', (req.url ?? '/').split('?')[0]!)!;
    writeResult(res, respond(toHttpEvent({ req, body, match, domainName: 'localhost' })));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((r) => server.close(r));
});

function call(method: string, path: string, body?: string | Buffer, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }>((resolve, reject) => {
    const data = body === undefined ? undefined : Buffer.from(body);
    const req = request(`${base}${path}`, { method, headers: { ...headers, ...(data ? { 'content-length': String(data.length) } : {}) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(data);
  });
}

async function eventOf(method: string, path: string, body?: string | Buffer, headers: Record<string, string> = {}): Promise<APIGatewayProxyEventV2> {
  respond = (event) => ({ statusCode: 200, body: JSON.stringify(event) });
  return JSON.parse((await call(method, path, body, headers)).text) as APIGatewayProxyEventV2;
}

const folder = '0123456789abcdef01234567';
const person = '89abcdef0123456789abcdef';

describe('request → HTTP API v2 event', () => {
  it('carries route, path, query, headers and cookies as API Gateway does', async () => {
    const event = await eventOf('GET', `/api/f/${folder}/people/${person}?a=1&a=2&b=x%20y`, undefined, {
      'X-Custom': 'One',
      Cookie: 'c1=v1; c2=v2',
      'User-Agent': 'tester/1',
    });

    expect(event).toMatchObject({
      version: '2.0',
      routeKey: 'GET /api/f/{folderKey}/people/{key}',
      rawPath: `/api/f/${folder}/people/${person}`,
      rawQueryString: 'a=1&a=2&b=x%20y',
      queryStringParameters: { a: '1,2', b: 'x y' },
      pathParameters: { folderKey: folder, key: person },
      cookies: ['c1=v1', 'c2=v2'],
      isBase64Encoded: false,
      requestContext: {
        apiId: 'local',
        domainName: 'localhost',
        routeKey: 'GET /api/f/{folderKey}/people/{key}',
        stage: '$default',
        http: { method: 'GET', path: `/api/f/${folder}/people/${person}`, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'tester/1' },
      },
    });
    expect(event.headers['x-custom']).toBe('One');
    expect(event.headers.cookie).toBeUndefined();
    expect(Object.keys(event.headers).every((k) => k === k.toLowerCase())).toBe(true);
    expect(event.requestContext.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(event.requestContext.timeEpoch).toBeGreaterThan(0);
    expect(event.body).toBeUndefined();
  });

  it('keeps a GET body', async () => {
    const event = await eventOf('GET', `/api/f/${folder}/lastevent`, '["a","b"]', { 'content-type': 'application/json' });

    expect(event).toMatchObject({ routeKey: 'GET /api/f/{folderKey}/lastevent', body: '["a","b"]', isBase64Encoded: false });
  });

  it('passes JSON, XML, JavaScript and text bodies as text', async () => {
    for (const type of ['application/json; charset=utf-8', 'application/vnd.api+json', 'text/plain', 'application/xml', 'application/javascript']) {
      const event = await eventOf('POST', '/token', 'héllo', { 'content-type': type });

      expect(event).toMatchObject({ body: 'héllo', isBase64Encoded: false });
    }
  });

  it('passes form, binary and untyped bodies as base64', async () => {
    const cases: Record<string, string>[] = [{ 'content-type': 'application/x-www-form-urlencoded' }, { 'content-type': 'application/octet-stream' }, {}];
    for (const headers of cases) {
      const event = await eventOf('POST', '/token', 'grant_type=password&x=é', headers);

      expect(event.isBase64Encoded).toBe(true);
      expect(Buffer.from(event.body!, 'base64').toString('utf8')).toBe('grant_type=password&x=é');
    }
  });

  it('routes an unknown path to $default', async () => {
    const event = await eventOf('DELETE', '/nowhere');

    expect(event.routeKey).toBe('$default');
    expect(event.pathParameters).toBeUndefined();
  });

  it.each([
    ['text/html', true],
    ['application/problem+json', true],
    ['application/x-www-form-urlencoded', false],
    ['multipart/form-data; boundary=x', false],
    ['image/png', false],
  ])('treats %s as text: %s', (type, text) => {
    expect(isTextContentType(type)).toBe(text);
  });
});

describe('handler result → response', () => {
  it('writes status, headers, cookies and a base64 body', async () => {
    respond = () => ({ statusCode: 201, headers: { 'X-One': '1' }, cookies: ['a=1', 'b=2'], body: Buffer.from([0, 1, 2]).toString('base64'), isBase64Encoded: true });

    const res = await call('GET', '/x');

    expect(res.status).toBe(201);
    expect(res.headers['x-one']).toBe('1');
    expect(res.headers['set-cookie']).toEqual(['a=1', 'b=2']);
    expect(Buffer.from(res.text, 'binary')).toHaveLength(3);
  });

  it('answers a plain value as 200 JSON', async () => {
    respond = () => ({ hello: 'world' });

    const res = await call('GET', '/x');

    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/application\/json/);
    expect(JSON.parse(res.text)).toEqual({ hello: 'world' });
  });
});

describe('family loading', () => {
  it('loads an existing family handler', async () => {
    expect(typeof (await new FamilyLoader().handler('service'))).toBe('function');
  });

  it('rejects a family without a handler module with FamilyMissing', async () => {
    await expect(new FamilyLoader().handler('nosuchfamily' as Family)).rejects.toBeInstanceOf(FamilyMissing);
  });
});
