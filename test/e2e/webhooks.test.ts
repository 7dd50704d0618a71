/**
 * Webhooks end to end on a local runtime of their own (the retry schedule shortened a thousand
 * times by GATEHOUSE_WEBHOOK_RETRY_SCALE, the real code path otherwise), with a real receiver on
 * 127.0.0.1 that verifies every delivery with the `standardwebhooks` package.
 */
import { randomBytes } from 'node:crypto';
import { serialize } from 'bson';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { adminToken, newRuntimeAdmin, spawnSeededRuntime, type SpawnedRuntime } from '../support/runtime.ts';
import { WebhookReceiver, waitFor } from '../support/webhook-receiver.ts';
import { documentedFetch } from '../support/documented-fetch.ts';

const NS = 'Gatehouse.Model';
const unique = (p: string) => `${p}-${randomBytes(4).toString('hex')}`;

let runtime: SpawnedRuntime;
let token: string;
let root: string;
const rx = new WebhookReceiver();

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await documentedFetch(`${runtime.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

async function ok(method: string, path: string, body: unknown, status: number): Promise<any> {
  const r = await call(method, path, body);
  expect(r.status, `${method} ${path}: ${JSON.stringify(r.body)}`).toBe(status);
  return r.body;
}

/** Registers a receiver path and a subscription posting to it; returns the subscription (with its Secret). */
async function subscribe(path: string, fields: Record<string, unknown> = {}, instance = root): Promise<any> {
  const Url = rx.endpoint(path);
  const hook = await ok('POST', `/api/f/${instance}/webhooks`, { CommonName: path, Url, ...fields }, 201);
  rx.secrets(path, hook.Secret);
  return hook;
}

let appNickname: string;
let typeA: any;
let typeB: any;

function posting(type: 'A' | 'B', n: number, occurredOn = new Date()): Record<string, unknown> {
  return {
    $type: `${NS}.EventMessagePosting, ${NS}`,
    OccurredOn: occurredOn.toISOString(),
    AppKey: appNickname,
    EventTypeMoniker: { Namespace: 'E2E', Nickname: type === 'A' ? 'HookA' : 'HookB' },
    RelatedObjects: [],
    EventDataBsonBase64: Buffer.from(serialize({ N: n })).toString('base64'),
  };
}

const publish = (type: 'A' | 'B', n: number, folder = root, occurredOn?: Date): Promise<any> =>
  ok('POST', `/api/f/${folder}/eventmessagesink`, posting(type, n, occurredOn), 201);

beforeAll(async () => {
  await rx.start();
  const admin = newRuntimeAdmin('Hooks');
  ({ runtime } = await spawnSeededRuntime(inject('runtimeDynamoEndpoint'), admin, { GATEHOUSE_WEBHOOK_RETRY_SCALE: '0.001' }));
  token = await adminToken(runtime.url, admin);
  root = runtime.instanceKey;
  appNickname = unique('HookApp');
  const app = await ok('POST', `/api/f/${root}/apps`, { $type: `${NS}.AppInfo, ${NS}`, CommonName: unique('app'), Monikers: [{ Namespace: 'E2E', Nickname: appNickname }] }, 201);
  typeA = await ok('PUT', `${app.Href}/eventtypes`, { $type: `${NS}.EventTypeInfo, ${NS}`, CommonName: 'A', Monikers: [{ Namespace: 'E2E', Nickname: 'HookA' }], Priority: 2 }, 201);
  typeB = await ok('PUT', `${app.Href}/eventtypes`, { $type: `${NS}.EventTypeInfo, ${NS}`, CommonName: 'B', Monikers: [{ Namespace: 'E2E', Nickname: 'HookB' }], Priority: 7 }, 201);
});

afterAll(async () => {
  await runtime?.stop();
  await rx.stop();
});

describe('webhooks on the local runtime', () => {
  it('delivers 500 events published in parallel once each per subscription, honouring filters, with audit events', async () => {
    const all = await subscribe('/all');
    const onlyB = await subscribe('/only-b', { EventTypeKeys: [typeB.Key] });
    const urgent = await subscribe('/urgent', { MinimumPriority: 5, IncludeAuditEvents: false });

    const TOTAL = 500;
    const keys = new Map<string, 'A' | 'B'>();
    await Promise.all(
      Array.from({ length: 20 }, async (_, c) => {
        for (let i = c; i < TOTAL; i += 20) {
          const t = i % 5 === 0 ? 'B' : 'A';
          keys.set((await publish(t, i)).Key, t);
        }
      }),
    );
    // An object change: its audit event goes to subscriptions that include audit events.
    const folder = await ok('POST', `/api/f/${root}/folders`, { $type: 'FolderInfo', CommonName: unique('audited') }, 201);

    const bKeys = [...keys].filter(([, t]) => t === 'B').map(([k]) => k);
    const ofOurs = (path: string) => rx.received(path).filter((d) => keys.has(d.payload.data.Key));
    const audited = (path: string) => rx.received(path).some((d) => d.payload.data.ObjectLinks?.some((l: any) => l.LinkedObjectKey === folder.Key));
    // Generous waits: 1 500 signed deliveries take a minute on a quiet two-core machine, more on a busy one.
    expect(await waitFor(() => new Set(ofOurs('/all').map((d) => d.id)).size === TOTAL && audited('/all'), 240_000), `all: ${ofOurs('/all').length}`).toBe(true);
    expect(await waitFor(() => ofOurs('/only-b').length >= bKeys.length && ofOurs('/urgent').length >= bKeys.length, 60_000)).toBe(true);
    // Let stragglers (duplicates, if any) arrive before counting.
    await new Promise((r) => setTimeout(r, 1000));

    const allIds = ofOurs('/all').map((d) => d.id);
    expect(new Set(allIds).size).toBe(TOTAL);
    // At least once: a duplicate is allowed (receivers de-duplicate on webhook-id), none is expected here.
    expect(allIds.length - TOTAL).toBe(0);
    for (const d of ofOurs('/all')) {
      expect(d.id).toBe(`msg_${d.payload.data.Key}_${all.Key}`);
      expect(d.payload.type).toBe('event');
      expect(d.payload.data.$type).toBe(`${NS}.EventMessageData, ${NS}`);
    }
    expect(ofOurs('/all').filter((d) => d.payload.data.EventTypeKey === typeA.Key)).toHaveLength(TOTAL - bKeys.length);
    expect(new Set(ofOurs('/only-b').map((d) => d.payload.data.Key))).toEqual(new Set(bKeys));
    expect(new Set(ofOurs('/only-b').map((d) => d.id)).size).toBe(bKeys.length);
    expect(new Set(ofOurs('/urgent').map((d) => d.payload.data.Key))).toEqual(new Set(bKeys));
    expect(audited('/urgent')).toBe(false);
    // The audit event arrived on the unfiltered subscription, and nothing failed to verify.
    expect(audited('/all')).toBe(true);
    for (const p of ['/all', '/only-b', '/urgent']) expect(rx.invalid(p)).toEqual([]);
    expect(onlyB.Key).not.toBe(urgent.Key);

    const hook = await ok('GET', all.Href, undefined, 200);
    expect(hook.LastDeliveryOn).toEqual(expect.any(String));
    expect(hook.Secret).toBeUndefined();
  }, 360_000);

  it('retries a receiver that fails its first 3 attempts and delivers on the 4th, with the same webhook-id', async () => {
    const hook = await subscribe('/flaky');
    rx.setStatus('/flaky', (n) => (n < 3 ? 503 : 200));
    const e = await publish('A', 1);
    expect(await waitFor(() => rx.received('/flaky').length === 1, 30_000)).toBe(true);
    expect(rx.requests('/flaky')).toBe(4);
    expect(rx.received('/flaky')[0]!.id).toBe(`msg_${e.Key}_${hook.Key}`);
    const attempts = await ok('GET', `${hook.Href}/deliveries`, undefined, 200);
    expect(attempts.map((a: any) => a.Attempt)).toEqual([4, 3, 2, 1]);
    expect(attempts.map((a: any) => a.StatusCode)).toEqual([200, 503, 503, 503]);
    expect(attempts.every((a: any) => a.EventKey === e.Key)).toBe(true);
    expect(attempts[1].NextAttemptOn).toEqual(expect.any(String));
    expect(attempts[0].NextAttemptOn).toBeNull();
  });

  it('never lets a slow receiver delay another subscription', async () => {
    const slow = await subscribe('/slow', { IncludeAuditEvents: false });
    const fast = await subscribe('/fast', { IncludeAuditEvents: false });
    rx.setDelay('/slow', 6000);
    const N = 48;
    const keys = new Set<string>();
    const started = Date.now();
    await Promise.all(Array.from({ length: 8 }, async (_, c) => {
      for (let i = c; i < N; i += 8) keys.add((await publish('A', 1000 + i)).Key);
    }));
    const ours = (path: string) => rx.received(path).filter((d) => keys.has(d.payload.data.Key));
    // Every event reaches the fast receiver while the slow one (6 s an answer, 32 at a time) is still far behind.
    expect(await waitFor(() => ours('/fast').length === N, 30_000)).toBe(true);
    const fastDone = Date.now() - started;
    expect(ours('/slow').length).toBeLessThan(N);
    expect(await waitFor(() => ours('/slow').length === N, 60_000)).toBe(true);
    const slowDone = Date.now() - started;
    expect(slowDone).toBeGreaterThan(fastDone + 5000);
    expect(new Set(ours('/slow').map((d) => d.id)).size).toBe(N);
    expect(slow.Key).not.toBe(fast.Key);
  });

  it('disables a subscription whose receiver answers 410', async () => {
    const hook = await subscribe('/gone');
    rx.setStatus('/gone', () => 410);
    await publish('A', 2);
    expect(await waitFor(async () => (await call('GET', hook.Href)).body.Enabled === false, 20_000)).toBe(true);
    const read = await ok('GET', hook.Href, undefined, 200);
    expect(read.DisabledReason).toMatch(/410/);
    expect(read.LastFailureOn).toEqual(expect.any(String));
    expect(rx.requests('/gone')).toBe(1);
  });

  it('signs with both secrets for a day after rotation', async () => {
    const hook = await subscribe('/rotated');
    const rotated = await ok('POST', `${hook.Href}/rotatesecret`, undefined, 200);
    expect(rotated.Secret).toMatch(/^whsec_/);
    expect(rotated.Secret).not.toBe(hook.Secret);
    rx.secrets('/rotated', hook.Secret);
    await publish('A', 3);
    expect(await waitFor(() => rx.received('/rotated').length === 1, 20_000)).toBe(true);
    const d = rx.received('/rotated')[0]!;
    expect(d.signatures).toHaveLength(2);
    // Each secret alone verifies the same delivery.
    const { Webhook } = await import('standardwebhooks');
    const body = JSON.stringify(d.payload);
    const headers = { 'webhook-id': d.id, 'webhook-timestamp': String(d.timestamp), 'webhook-signature': d.signatures.join(' ') };
    expect(new Webhook(hook.Secret).verify(body, headers)).toEqual(d.payload);
    expect(new Webhook(rotated.Secret).verify(body, headers)).toEqual(d.payload);
  });

  it('replays a window and redelivers one attempt, keeping each event\'s webhook-id', async () => {
    const hook = await subscribe('/replay');
    const base = Date.UTC(2025, 5, 1);
    const inWindow: any[] = [];
    for (let i = 0; i < 5; i++) inWindow.push(await publish('A', i, root, new Date(base + i * 60_000)));
    const outside = await publish('A', 99, root, new Date(base + 3600_000));
    expect(await waitFor(() => rx.received('/replay').length === 6, 20_000)).toBe(true);

    const r = await ok('POST', `${hook.Href}/replay`, { Since: new Date(base).toISOString(), Until: new Date(base + 10 * 60_000).toISOString() }, 202);
    expect(r.Count).toBe(5);
    expect(await waitFor(() => rx.received('/replay').length === 11, 20_000)).toBe(true);
    const replayed = rx.received('/replay').slice(6);
    expect(new Set(replayed.map((d) => d.payload.data.Key))).toEqual(new Set(inWindow.map((e) => e.Key)));
    expect(replayed.map((d) => d.id).sort()).toEqual(inWindow.map((e) => `msg_${e.Key}_${hook.Key}`).sort());
    expect(replayed.some((d) => d.payload.data.Key === outside.Key)).toBe(false);

    const attempts = await ok('GET', `${hook.Href}/deliveries?pageSize=100`, undefined, 200);
    const first = attempts.find((a: any) => a.EventKey === inWindow[0].Key);
    await ok('POST', `${hook.Href}/deliveries/${first.Key}/redeliver`, undefined, 202);
    expect(await waitFor(() => rx.received('/replay').length === 12, 20_000)).toBe(true);
    expect(rx.received('/replay')[11]!.id).toBe(`msg_${inWindow[0].Key}_${hook.Key}`);

    const tooWide = await call('POST', `${hook.Href}/replay`, { Since: 'yesterday', Until: new Date().toISOString() });
    expect(tooWide.status).toBe(400);
  });

  it('never delivers an event outside a subscription\'s instance subtree', async () => {
    const child = await ok('POST', `/api/f/${root}/instances`, { $type: 'InstanceInfo', CommonName: unique('child') }, 201);
    const childHook = await subscribe('/child', {}, child.Key);
    const rootHook = await subscribe('/root-sees-child');
    const inRoot = await publish('A', 10);
    const inChild = await publish('A', 11, child.Key);
    expect(await waitFor(() => rx.ids('/root-sees-child').size >= 2 && rx.ids('/child').size >= 1, 20_000)).toBe(true);
    await new Promise((r) => setTimeout(r, 1000));
    expect([...rx.ids('/child')]).toEqual([`msg_${inChild.Key}_${childHook.Key}`]);
    // The root's subscription sees both (and the audit event of the child's creation, published later).
    const ours = new Set([inRoot.Key, inChild.Key]);
    const rootGot = rx.received('/root-sees-child').filter((d) => ours.has(d.payload.data.Key)).map((d) => d.id);
    expect(new Set(rootGot)).toEqual(new Set([`msg_${inRoot.Key}_${rootHook.Key}`, `msg_${inChild.Key}_${rootHook.Key}`]));
    // A child's subscription may not name its parent's topic.
    const up = await call('POST', `/api/f/${child.Key}/webhooks`, { Url: rx.endpoint('/up'), Topics: [`/${root}/$`] });
    expect(up.status).toBe(403);
  });

  it('refuses a private-address URL', async () => {
    for (const Url of ['https://10.1.2.3/hook', 'http://192.168.0.10/hook', 'https://[fe80::1]/x', 'https://169.254.169.254/latest/meta-data']) {
      const r = await call('POST', `/api/f/${root}/webhooks`, { Url });
      expect(r.status, Url).toBe(400);
      expect(r.body.Error).toBe('InvalidUrl');
    }
  });
});
