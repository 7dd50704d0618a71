/**
 * Webhook signing, the retry schedule, target checks and matching, without a network or a table.
 */
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import type { StoredWebhook } from '#shared/db/webhooks-repo.ts';
import { SYSTEM_APP_KEY } from '#shared/events/audit.ts';
import { COULD_NOT_CONNECT, publicReason, TIMED_OUT } from '#shared/live/webhooks/reasons.ts';
import { MAX_ATTEMPTS, RETRY_DELAYS_SECONDS, retryDelayMs } from '#shared/live/webhooks/schedule.ts';
import { messageIdOf, newSecret, sign, signedHeaders } from '#shared/live/webhooks/signing.ts';
import { addressKind, urlProblem } from '#shared/live/webhooks/ssrf.ts';
import { webhookReceives, type MatchableEvent } from '#shared/live/webhooks/subscriptions.ts';

const I = 'aaaaaaaaaaaaaaaaaaaaaaa1';
const CHILD = 'aaaaaaaaaaaaaaaaaaaaaaa2';
const OBJ = 'bbbbbbbbbbbbbbbbbbbbbbb1';
const APP = 'ccccccccccccccccccccccc1';
const TYPE = 'ddddddddddddddddddddddd1';

describe('signing', () => {
  it('makes whsec_ secrets of 32 random bytes', () => {
    const a = newSecret();
    expect(a).toMatch(/^whsec_/);
    expect(Buffer.from(a.slice(6), 'base64')).toHaveLength(32);
    expect(newSecret()).not.toBe(a);
  });

  it('signs as Standard Webhooks verifies, with one signature per secret', () => {
    const [s1, s2] = [newSecret(), newSecret()];
    const body = JSON.stringify({ type: 'event', timestamp: new Date().toISOString(), data: { Key: OBJ } });
    const ts = Math.floor(Date.now() / 1000);
    const headers = signedHeaders([s1, s2], 'msg_1', ts, body);
    expect(headers['webhook-signature'].split(' ')).toEqual([sign(s1, 'msg_1', ts, body), sign(s2, 'msg_1', ts, body)]);
    expect(new Webhook(s1).verify(body, headers)).toEqual(JSON.parse(body));
    expect(new Webhook(s2).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(newSecret()).verify(body, headers)).toThrow();
    expect(() => new Webhook(s1).verify(`${body} `, headers)).toThrow();
  });

  it('gives an event the same webhook-id for a subscription every time, and another for another subscription', () => {
    expect(messageIdOf(OBJ, I)).toBe(messageIdOf(OBJ, I));
    expect(messageIdOf(OBJ, I)).not.toBe(messageIdOf(OBJ, CHILD));
  });
});

describe('retry schedule', () => {
  it('waits 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h within 10 %, then stops', () => {
    expect(RETRY_DELAYS_SECONDS).toEqual([5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400]);
    expect(MAX_ATTEMPTS).toBe(10);
    RETRY_DELAYS_SECONDS.forEach((s, i) => {
      expect(retryDelayMs(i + 1, 1, 0)).toBe(Math.round(s * 900));
      expect(retryDelayMs(i + 1, 1, 0.5)).toBe(s * 1000);
      expect(retryDelayMs(i + 1, 1, 0.999999)).toBeLessThanOrEqual(s * 1100);
    });
    expect(retryDelayMs(10)).toBeUndefined();
    expect(retryDelayMs(1, 0.001, 0.5)).toBe(5);
  });
});

describe('targets', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['::1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['fd12::1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['fe80::1', 'link-local'],
    ['224.0.0.1', 'multicast'],
    ['ff02::1', 'multicast'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['::ffff:10.0.0.1', 'private'],
    ['93.184.216.34', undefined],
    ['2606:4700::1111', undefined],
  ])('classifies %s as %s', (address, kind) => {
    expect(addressKind(address)).toBe(kind);
  });

  it('accepts https to public hosts, and http only to loopback when loopback is allowed', () => {
    expect(urlProblem('https://hooks.example.com/in', false)).toBeUndefined();
    expect(urlProblem('http://hooks.example.com/in', false)).toMatch(/https/);
    expect(urlProblem('http://127.0.0.1:8080/in', true)).toBeUndefined();
    expect(urlProblem('http://localhost:8080/in', true)).toBeUndefined();
    expect(urlProblem('http://127.0.0.1:8080/in', false)).toMatch(/https/);
    expect(urlProblem('https://localhost/in', false)).toMatch(/loopback/);
    expect(urlProblem('https://10.0.0.1/in', true)).toMatch(/private/);
    expect(urlProblem('https://user:pw@hooks.example.com/', false)).toMatch(/credentials/);
  });
});

describe('matching', () => {
  const hook = (settings: Partial<StoredWebhook['settings']> = {}, instanceKey = I): StoredWebhook => ({
    key: 'eeeeeeeeeeeeeeeeeeeeeee1',
    instanceKey,
    settings: { CommonName: '', Url: 'https://x', Enabled: true, Topics: [`/${instanceKey}/$`], AppKeys: [], EventTypeKeys: [], MinimumPriority: null, IncludeAuditEvents: true, ...settings },
    secret: newSecret(),
    previousSecret: undefined,
    previousSecretUntil: undefined,
    version: 1,
    disabledReason: null,
    lastDeliveryOn: null,
    lastFailureOn: null,
    failingSince: null,
  });
  const event = (over: Partial<MatchableEvent> = {}): MatchableEvent => ({
    instances: [I],
    linkedObjectKeys: new Set(),
    appKey: APP,
    eventTypeKey: TYPE,
    priority: 3,
    ...over,
  });

  it('takes events of the instance and of instances below it, never above', () => {
    expect(webhookReceives(hook(), event())).toBe(true);
    expect(webhookReceives(hook(), event({ instances: [I, CHILD] }))).toBe(true);
    expect(webhookReceives(hook({}, CHILD), event({ instances: [I] }))).toBe(false);
    expect(webhookReceives(hook({ Topics: [`/${CHILD}/$`] }, CHILD), event({ instances: [I] }))).toBe(false);
  });

  it('takes an object topic only for events of that object', () => {
    const h = hook({ Topics: [`/${I}/${OBJ}`] });
    expect(webhookReceives(h, event())).toBe(false);
    expect(webhookReceives(h, event({ linkedObjectKeys: new Set([OBJ]) }))).toBe(true);
  });

  it('applies the app, event type, priority and audit filters, and nothing when disabled', () => {
    expect(webhookReceives(hook({ AppKeys: ['ccccccccccccccccccccccc9'] }), event())).toBe(false);
    expect(webhookReceives(hook({ AppKeys: [APP] }), event())).toBe(true);
    expect(webhookReceives(hook({ EventTypeKeys: [TYPE] }), event())).toBe(true);
    expect(webhookReceives(hook({ EventTypeKeys: [APP] }), event())).toBe(false);
    expect(webhookReceives(hook({ MinimumPriority: 4 }), event())).toBe(false);
    expect(webhookReceives(hook({ MinimumPriority: 3 }), event())).toBe(true);
    expect(webhookReceives(hook({ IncludeAuditEvents: false }), event({ appKey: SYSTEM_APP_KEY }))).toBe(false);
    expect(webhookReceives(hook(), event({ appKey: SYSTEM_APP_KEY }))).toBe(true);
    expect(webhookReceives(hook({ Enabled: false }), event())).toBe(false);
  });
});

describe('failure reasons shown to tenants', () => {
  it('rejects showing the network detail of attempts recorded before reasons were generic', () => {
    expect(publicReason('ENOTFOUND: getaddrinfo ENOTFOUND vm')).toBe(COULD_NOT_CONNECT);
    expect(publicReason('Refused: vm resolves to 127.0.0.1, a loopback address.')).toBe(COULD_NOT_CONNECT);
    expect(publicReason('EHOSTUNREACH: connect EHOSTUNREACH 10.1.2.3:443')).toBe(COULD_NOT_CONNECT);
    expect(publicReason('No answer within 10 s.')).toBe(TIMED_OUT);
  });

  it('shows the fixed reasons as they are', () => {
    for (const r of [COULD_NOT_CONNECT, TIMED_OUT, 'The subscription is disabled.', 'The TLS handshake with the receiver failed.']) expect(publicReason(r)).toBe(r);
  });
});
