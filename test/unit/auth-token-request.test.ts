import { describe, expect, it } from 'vitest';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { createHandler } from '#functions/token/handler.ts';
import { loadConfig } from '#shared/config.ts';
import { createCoreDeps } from '#shared/core-deps.ts';
import { OAuthError } from '#shared/errors.ts';
import { checkClient, parseTokenFields, readTokenRequest, splitLoginName } from '#shared/auth/token-request.ts';
import { httpEvent, lambdaContext } from '../support/api.ts';

const read = (form: string) => readTokenRequest(parseTokenFields(form));

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    if (err instanceof OAuthError) return err.code;
    throw err;
  }
  return undefined;
}

describe('token form parsing', () => {
  it('reads the form as field clients send it: by hand, with a stray undefined= field', () => {
    const r = read('grant_type=password&username=Acme\\alice&password=Pa$$w0rd!&client_id=consoleApp&undefined=');
    expect(r).toMatchObject({ grantType: 'password', clientId: 'consoleApp', username: 'Acme\\alice', password: 'Pa$$w0rd!' });
  });

  it('decodes percent-encoded fields', () => {
    const r = read('grant_type=password&username=Acme%5Calice&password=a%26b%3Dc%2B');
    expect(r.username).toBe('Acme\\alice');
    expect(r.password).toBe('a&b=c+');
  });

  it('treats a missing grant_type with username and password as the password grant', () => {
    expect(read('instance=Acme&username=alice&password=x').grantType).toBe('password');
  });

  it('treats a missing grant_type with only a refresh token as the refresh grant', () => {
    expect(read('refresh_token=abc').grantType).toBe('refresh_token');
  });

  it.each(['grant_type=client_credentials&username=a&password=b', 'grant_type=PASSWORD', '', 'client_id=consoleApp'])(
    'rejects %j with unsupported_grant_type',
    (form) => {
      expect(codeOf(() => read(form))).toBe('unsupported_grant_type');
    },
  );

  it('defaults client_id to consoleApp and reads the two-factor fields', () => {
    const r = read('grant_type=password&username=a&password=b&sendonetimepassword=True&onetimepassword=%20123456%20&newpassword=N3w!pass');
    expect(r).toMatchObject({ clientId: 'consoleApp', sendOneTimePassword: true, oneTimePassword: '123456', newPassword: 'N3w!pass' });
  });

  it('accepts a JSON object body', () => {
    expect(read('{"grant_type":"password","username":"Acme\\\\bob","password":"p"}')).toMatchObject({ username: 'Acme\\bob', password: 'p' });
  });
});

describe('login names', () => {
  it.each([
    ['Acme\\alice', undefined, 'Acme', 'alice'],
    ['alice', 'Acme', 'Acme', 'alice'],
    ['Acme\\alice', 'Other', 'Acme', 'alice'],
    ['alice', undefined, undefined, 'alice'],
    ['\\alice', 'Acme', 'Acme', 'alice'],
    ['Acme\\a\\b', undefined, 'Acme', 'a\\b'],
  ] as const)('splits %j with instance %j', (username, instance, instanceName, userName) => {
    expect(splitLoginName(username, instance)).toEqual({ instanceName, userName });
  });
});

describe('client checks', () => {
  const cfg = loadConfig({ GATEHOUSE_CLIENT_SECRET: 'consoleSecret', GATEHOUSE_CLIENTS: 'kiosk:kioskSecret' });

  it('accepts consoleApp without a secret or with the right one', () => {
    expect(codeOf(() => checkClient(cfg, 'consoleApp', undefined))).toBeUndefined();
    expect(codeOf(() => checkClient(cfg, 'consoleApp', 'consoleSecret'))).toBeUndefined();
  });

  it('rejects consoleApp with a wrong secret', () => {
    expect(codeOf(() => checkClient(cfg, 'consoleApp', 'nope'))).toBe('invalid_client');
  });

  it('requires the secret of a confidential client', () => {
    expect(codeOf(() => checkClient(cfg, 'kiosk', 'kioskSecret'))).toBeUndefined();
    expect(codeOf(() => checkClient(cfg, 'kiosk', undefined))).toBe('invalid_client');
    expect(codeOf(() => checkClient(cfg, 'kiosk', 'consoleSecret'))).toBe('invalid_client');
  });

  it('rejects an unknown client', () => {
    expect(codeOf(() => checkClient(cfg, 'mallory', 'consoleSecret'))).toBe('invalid_client');
  });
});

describe('token form bodies as field clients send them', () => {
  const config = loadConfig({ GATEHOUSE_LOG_LEVEL: 'SILENT' });
  const handler = createHandler(() => createCoreDeps({ config, checkStatus: false }));
  const form = 'grant_type=password&client_id=mallory&instance=Acme&username=alice&password=x&undefined=';
  const send = async (e: APIGatewayProxyEventV2) => {
    const res = await handler(e, lambdaContext());
    return { status: res.statusCode, body: JSON.parse(res.body ?? '{}') };
  };

  it('reads a form labelled as JSON, or sent base64 without a content type, as the form it is', async () => {
    const labelled = await send(httpEvent('POST', '/token', { body: form, contentType: 'application/json' }));
    expect(labelled).toEqual({ status: 400, body: { error: 'invalid_client', error_description: expect.any(String) } });
    const bare = httpEvent('POST', '/token', { body: form });
    delete bare.headers['content-type'];
    const unlabelled = await send({ ...bare, body: Buffer.from(form).toString('base64'), isBase64Encoded: true });
    expect(unlabelled.body.error).toBe('invalid_client');
  });

  it('still rejects a malformed JSON object body', async () => {
    const res = await send(httpEvent('POST', '/token', { body: '{"grant_type":', contentType: 'application/json' }));
    expect(res.status).toBe(400);
    expect(res.body.Error).toBe('InvalidJson');
  });
});
