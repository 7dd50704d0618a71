import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CloudFormationCustomResourceEvent } from 'aws-lambda';
import { calculateJwkThumbprint, createLocalJWKSet, importJWK, jwtVerify, SignJWT, type JSONWebKeySet, type JWK } from 'jose';
import { describe, expect, it } from 'vitest';
import { createHandler, putResponse, type KeygenDeps, type KeygenProperties } from '../../functions/keygen/handler.ts';
import { parseRing } from '../../shared/auth/key-ring.ts';
import { generateSigningJwk } from '../../shared/auth/key-files.ts';

const ids: KeygenProperties = {
  SigningKeySecretId: 'arn:aws:secretsmanager:eu-west-1:111122223333:secret:SigningKey-abc',
  PublicKeysTable: 'Gatehouse-EU-DataTable-1A2B3C',
};

/**
 * Secrets as CloudFormation creates them: a random placeholder value. The same map holds the JWKS
 * item of each table (keyed by table name), absent until written.
 */
function freshSecrets(...secretIds: string[]): Map<string, string> {
  return new Map(secretIds.map((id) => [id, 'p1aceh0lder-R4nd0m']));
}

interface Harness {
  readonly deps: KeygenDeps;
  readonly secrets: Map<string, string>;
  readonly writes: string[];
  readonly responses: { url: string; body: Record<string, unknown> }[];
}

function harness(secrets: Map<string, string>, overrides: Partial<KeygenDeps> = {}): Harness {
  const writes: string[] = [];
  const responses: Harness['responses'] = [];
  const deps: KeygenDeps = {
    generate: generateSigningJwk,
    getSecret: async (id) => secrets.get(id),
    putSecret: async (id, value) => {
      writes.push(id);
      secrets.set(id, value);
    },
    getJwks: async (table) => secrets.get(table),
    putJwks: async (table, value) => {
      writes.push(table);
      secrets.set(table, value);
    },
    respond: async (url, body) => {
      responses.push({ url, body: JSON.parse(body) as Record<string, unknown> });
    },
    log: () => {},
    ...overrides,
  };
  return { deps, secrets, writes, responses };
}

const common = {
  ServiceToken: 'arn:aws:lambda:eu-west-1:111122223333:function:keygen',
  ResponseURL: 'https://cloudformation-custom-resource-response.example/response',
  StackId: 'arn:aws:cloudformation:eu-west-1:111122223333:stack/Gatehouse-EU/1',
  RequestId: 'request-1',
  LogicalResourceId: 'SigningKeysGenerate',
  ResourceType: 'Custom::GatehouseSigningKey',
};

type Event = CloudFormationCustomResourceEvent<KeygenProperties>;

function createEvent(props: Partial<KeygenProperties> = ids): Event {
  return { ...common, RequestType: 'Create', ResourceProperties: { ServiceToken: common.ServiceToken, ...props } as Event['ResourceProperties'] };
}

function updateEvent(props: KeygenProperties, old: KeygenProperties): Event {
  return {
    ...common,
    RequestType: 'Update',
    PhysicalResourceId: old.SigningKeySecretId,
    ResourceProperties: { ServiceToken: common.ServiceToken, ...props },
    OldResourceProperties: old,
  };
}

const context = { logStreamName: '2025/01/01/[$LATEST]abc' };

/** The signing key of the stored ring (its newest key) and the stored JWKS. */
function keyPairIn(secrets: Map<string, string>, where: KeygenProperties = ids): { jwk: JWK; jwks: JSONWebKeySet } {
  return {
    jwk: parseRing(secrets.get(where.SigningKeySecretId))!.keys.at(-1)!.jwk,
    jwks: JSON.parse(secrets.get(where.PublicKeysTable)!) as JSONWebKeySet,
  };
}

describe('keygen custom resource', () => {
  it('writes the public JWKS, then the private JWK, on Create and answers SUCCESS', async () => {
    const h = harness(freshSecrets(ids.SigningKeySecretId));

    await createHandler(() => h.deps)(createEvent(), context);

    expect(h.writes).toEqual([ids.PublicKeysTable, ids.SigningKeySecretId]);
    const { jwk, jwks } = keyPairIn(h.secrets);
    expect(jwk).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig', d: expect.any(String) });
    expect(jwks.keys).toHaveLength(1);
    expect(jwks.keys[0]!.d).toBeUndefined();
    expect(jwks.keys[0]!.kid).toBe(jwk.kid);
    expect(jwk.kid).toBe(await calculateJwkThumbprint(jwks.keys[0]!));
    expect(h.responses).toEqual([
      {
        url: common.ResponseURL,
        body: {
          Status: 'SUCCESS',
          PhysicalResourceId: ids.SigningKeySecretId,
          StackId: common.StackId,
          RequestId: common.RequestId,
          LogicalResourceId: common.LogicalResourceId,
        },
      },
    ]);
  });

  it('writes a pair that verifies: a token signed with the private key checks against the JWKS', async () => {
    const h = harness(freshSecrets(ids.SigningKeySecretId));
    await createHandler(() => h.deps)(createEvent(), context);
    const { jwk, jwks } = keyPairIn(h.secrets);

    const token = await new SignJWT({ sub: 'admin' })
      .setProtectedHeader({ alg: 'ES256', kid: jwk.kid! })
      .sign(await importJWK(jwk, 'ES256'));

    await expect(jwtVerify(token, createLocalJWKSet(jwks))).resolves.toMatchObject({ payload: { sub: 'admin' } });
  });

  it('keeps the key pair when invoked again (a retried Create, an Update, a rollback)', async () => {
    const h = harness(freshSecrets(ids.SigningKeySecretId));
    const handler = createHandler(() => h.deps);
    await handler(createEvent(), context);
    const before = new Map(h.secrets);

    await handler(createEvent(), context);
    await handler(updateEvent(ids, { ...ids, PublicKeysTable: 'elsewhere' }), context);

    expect(h.writes).toHaveLength(2);
    expect(h.secrets).toEqual(before);
    expect(h.responses.map((r) => r.body.Status)).toEqual(['SUCCESS', 'SUCCESS', 'SUCCESS']);
  });

  it('makes a new key pair when an Update names new, empty secrets', async () => {
    const replaced = { SigningKeySecretId: `${ids.SigningKeySecretId}-2`, PublicKeysTable: `${ids.PublicKeysTable}-2` };
    const h = harness(freshSecrets(replaced.SigningKeySecretId));

    await createHandler(() => h.deps)(updateEvent(replaced, ids), context);

    expect(h.writes).toEqual([replaced.PublicKeysTable, replaced.SigningKeySecretId]);
    expect(keyPairIn(h.secrets, replaced).jwk.d).toEqual(expect.any(String));
    expect(h.responses[0]!.body).toMatchObject({ Status: 'SUCCESS', PhysicalResourceId: replaced.SigningKeySecretId });
  });

  it('replaces a half-written pair (public key without its private key)', async () => {
    const h = harness(freshSecrets(ids.SigningKeySecretId));
    const orphan = await generateSigningJwk();
    h.secrets.set(ids.PublicKeysTable, JSON.stringify({ keys: [{ ...orphan, d: undefined }] }));

    await createHandler(() => h.deps)(createEvent(), context);

    const { jwk, jwks } = keyPairIn(h.secrets);
    expect(jwk.kid).not.toBe(orphan.kid);
    expect(jwks.keys.map((k) => k.kid)).toEqual([jwk.kid]);
  });

  it('keeps everything on Delete', async () => {
    const h = harness(freshSecrets(ids.SigningKeySecretId));

    await createHandler(() => h.deps)(
      { ...common, RequestType: 'Delete', PhysicalResourceId: ids.SigningKeySecretId, ResourceProperties: { ServiceToken: common.ServiceToken, ...ids } },
      context,
    );

    expect(h.writes).toEqual([]);
    expect(h.responses[0]!.body).toMatchObject({ Status: 'SUCCESS', PhysicalResourceId: ids.SigningKeySecretId });
  });

  it('rejects a Create without secret ids, answering FAILED with a reason', async () => {
    const h = harness(new Map());

    await createHandler(() => h.deps)(createEvent({ SigningKeySecretId: ids.SigningKeySecretId }), context);

    expect(h.writes).toEqual([]);
    expect(h.responses[0]!.body).toMatchObject({
      Status: 'FAILED',
      Reason: expect.stringContaining('PublicKeysTable'),
      PhysicalResourceId: context.logStreamName,
    });
  });

  it('answers FAILED, without key material, when a secret cannot be written', async () => {
    const h = harness(freshSecrets(ids.SigningKeySecretId), {
      putSecret: async (secretId) => {
        if (secretId === ids.SigningKeySecretId) throw new Error('AccessDeniedException: not allowed');
      },
    });

    await createHandler(() => h.deps)(createEvent(), context);

    expect(h.responses).toHaveLength(1);
    expect(h.responses[0]!.body).toMatchObject({ Status: 'FAILED', Reason: expect.stringContaining('AccessDenied') });
    expect(JSON.stringify(h.responses)).not.toMatch(/"(d|x|y)":/);
  });
});

describe('keygen response upload', () => {
  async function withServer(
    status: number,
    run: (url: string, received: { method?: string; headers: Record<string, unknown>; body: string }[]) => Promise<void>,
  ): Promise<void> {
    const received: { method?: string; headers: Record<string, unknown>; body: string }[] = [];
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString('utf8')));
      req.on('end', () => {
        received.push({ method: req.method, headers: req.headers, body });
        res.statusCode = status;
        res.end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      await run(`http://127.0.0.1:${port}/response?X-Amz-Signature=abc`, received);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  }

  it('PUTs the document with an empty Content-Type and its byte length', async () => {
    const document = JSON.stringify({ Status: 'SUCCESS', PhysicalResourceId: 'é' });

    await withServer(200, async (url, received) => {
      await putResponse(url, document);

      expect(received).toHaveLength(1);
      expect(received[0]).toMatchObject({ method: 'PUT', body: document });
      expect(received[0]!.headers['content-type']).toBe('');
      expect(received[0]!.headers['content-length']).toBe(String(Buffer.byteLength(document)));
    });
  });

  it('rejects when the upload is refused', async () => {
    await withServer(403, async (url) => {
      await expect(putResponse(url, '{}')).rejects.toThrow(/403/);
    });
  });
});

describe('keygen scheduled maintenance', () => {
  const policy = { keyCacheSeconds: 300, accessTokenTtl: 3600, rotationDays: 30 };
  const T0 = Date.parse('2026-01-01T00:00:00Z');

  function scheduled(secrets: Map<string, string>, at: { ms: number }) {
    const h = harness(secrets, { now: () => new Date(at.ms), policy, stores: ids });
    return { h, run: (action: 'maintain' | 'rotate') => createHandler(() => h.deps)({ action }, context) };
  }

  it('rolls over: publishes the next key first, signs with it after the lead, drops the old after the token lifetime', async () => {
    const at = { ms: T0 };
    const { h, run } = scheduled(freshSecrets(ids.SigningKeySecretId), at);
    await createHandler(() => h.deps)(createEvent(), context);
    const first = keyPairIn(h.secrets).jwk.kid!;

    at.ms = T0 + 29 * 86_400_000;
    expect(await run('maintain')).toEqual({ key: 'kept' });

    at.ms = T0 + 30 * 86_400_000;
    h.writes.length = 0;
    const rolled = (await run('maintain')) as { key: string; scheduled: string };
    expect(rolled.key).toBe('rotated');
    expect(h.writes).toEqual([ids.PublicKeysTable, ids.SigningKeySecretId]);
    const ring = parseRing(h.secrets.get(ids.SigningKeySecretId))!;
    expect(ring.keys.map((k) => k.jwk.kid)).toEqual([first, rolled.scheduled]);
    expect(ring.keys[1]!.signsFrom).toBe(at.ms / 1000 + 600);
    expect(ring.keys[0]!.dropAfter).toBe(at.ms / 1000 + 600 + 3600 + 300);
    expect(keyPairIn(h.secrets).jwks.keys.map((k) => k.kid)).toEqual([first, rolled.scheduled]);

    at.ms += (600 + 3600 + 300) * 1000;
    h.writes.length = 0;
    expect(await run('maintain')).toEqual({ key: 'maintained', dropped: [first] });
    expect(h.writes).toEqual([ids.SigningKeySecretId, ids.PublicKeysTable]);
    expect(keyPairIn(h.secrets).jwks.keys.map((k) => k.kid)).toEqual([rolled.scheduled]);
    expect(JSON.stringify(keyPairIn(h.secrets).jwks)).not.toMatch(/"d":/);
  });

  it('rotates on demand once, and says so when a key is already waiting to sign', async () => {
    const at = { ms: T0 };
    const { h, run } = scheduled(freshSecrets(ids.SigningKeySecretId), at);
    await createHandler(() => h.deps)(createEvent(), context);

    expect(await run('rotate')).toMatchObject({ key: 'rotated', scheduled: expect.any(String) });
    at.ms += 60_000;
    expect(await run('rotate')).toEqual({ key: 'kept', rotationPending: true });
    expect(parseRing(h.secrets.get(ids.SigningKeySecretId))!.keys).toHaveLength(2);
  });

  it('reads a single private JWK from before rotation as a ring of one, and rolls it over', async () => {
    const at = { ms: T0 };
    const legacy = await generateSigningJwk();
    const secrets = new Map([
      [ids.SigningKeySecretId, JSON.stringify(legacy)],
      [ids.PublicKeysTable, JSON.stringify({ keys: [{ ...legacy, d: undefined }] })],
    ]);
    const { run } = scheduled(secrets, at);
    const out = (await run('maintain')) as { key: string; scheduled: string };
    expect(out.key).toBe('rotated');
    expect(JSON.parse(secrets.get(ids.PublicKeysTable)!).keys.map((k: JWK) => k.kid)).toEqual([legacy.kid, out.scheduled]);
  });

  it('completes a JWKS another run overwrote in between', async () => {
    const at = { ms: T0 };
    let stale: string | undefined;
    const secrets = freshSecrets(ids.SigningKeySecretId);
    const { h } = scheduled(secrets, at);
    await createHandler(() => h.deps)(createEvent(), context);
    const before = secrets.get(ids.PublicKeysTable)!;
    // Another run writes its (older) JWKS right after this run's ring.
    const put = h.deps.putSecret;
    const racing = harness(secrets, {
      ...h.deps,
      putSecret: async (id, value) => {
        await put(id, value);
        if (id === ids.SigningKeySecretId && !stale) {
          stale = before;
          secrets.set(ids.PublicKeysTable, before);
        }
      },
    });
    const out = (await createHandler(() => racing.deps)({ action: 'rotate' }, context)) as { scheduled: string };
    expect(JSON.parse(secrets.get(ids.PublicKeysTable)!).keys.map((k: JWK) => k.kid)).toContain(out.scheduled);
  });

  it('refuses an event that is neither CloudFormation nor a maintenance action', async () => {
    const { h } = scheduled(new Map(), { ms: T0 });
    await expect(createHandler(() => h.deps)({ action: 'explode' } as never, context)).rejects.toThrow(/maintain/);
  });
});
