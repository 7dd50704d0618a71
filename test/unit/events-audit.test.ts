/** Pure parts of the audit trail and of alarm membership. */
import { describe, expect, it } from 'vitest';
import type { StoredObject } from '#shared/model/stored-object.ts';
import { auditEvent, auditEventKey, auditPlacement, SYSTEM_EVENT_TYPES } from '#shared/events/audit-event.ts';
import { SYSTEM_APP_KEY } from '#shared/events/system-app.ts';
import { eventTypeRef } from '#shared/events/event-type-writes.ts';
import { TtlCache } from '#shared/ttl-cache.ts';
import { canonicalHref, eventTypeHref } from '#shared/events/render.ts';

const R = '650000000000000000000001';
const F = '650000000000000000000002';
const A = '650000000000000000000003';
const obj = (over: Partial<StoredObject>): StoredObject => ({
  key: '650000000000000000000009',
  collection: 'people',
  type: 'PersonInfo',
  folder: F,
  path: [R, F],
  instances: [R],
  version: 1,
  doc: { $type: 'PersonInfo', CommonName: 'Ann' },
  ...over,
});

describe('audit events', () => {
  it('derive a stable ObjectId-shaped key from the change time and the record id', () => {
    const k = auditEventKey({ at: Date.UTC(2024, 0, 1), eventId: 'abc' });
    expect(k).toMatch(/^[0-9a-f]{24}$/);
    expect(k.slice(0, 8)).toBe((Date.UTC(2024, 0, 1) / 1000).toString(16));
    expect(auditEventKey({ at: Date.UTC(2024, 0, 1), eventId: 'abc' })).toBe(k);
    expect(auditEventKey({ at: Date.UTC(2024, 0, 1), eventId: 'abd' })).not.toBe(k);
  });

  it('live in the object\'s folder; an instance\'s in its parent; a root instance\'s in itself; an event type\'s in its app\'s folder', () => {
    expect(auditPlacement(obj({}))).toEqual({ folder: F, path: [R, F], instances: [R] });
    const child = obj({ key: F, collection: 'instances', folder: R, path: [R], instances: [R, F] });
    expect(auditPlacement(child)).toEqual({ folder: R, path: [R], instances: [R] });
    const root = obj({ key: R, collection: 'instances', folder: '', path: [], instances: [R] });
    expect(auditPlacement(root)).toEqual({ folder: R, path: [R], instances: [R] });
    const type = obj({ collection: 'eventtypes', folder: A, path: [R, A], instances: [R] });
    expect(auditPlacement(type)).toEqual({ folder: R, path: [R], instances: [R] });
  });

  it('carry the system app, the type of the change and the changed object', () => {
    const w = auditEvent({ kind: 'updated', eventId: 'x', at: Date.UTC(2024, 0, 1), before: obj({}), after: obj({ version: 2 }) }, new Date(Date.UTC(2024, 0, 2)), 30);
    expect(w.event.doc).toMatchObject({ AppKey: SYSTEM_APP_KEY, EventTypeKey: SYSTEM_EVENT_TYPES.updated.Key, MessageShort: 'PersonInfo Ann updated', OccurredOn: '2024-01-01T00:00:00.000Z' });
    expect(w.relatedKeys).toEqual(['650000000000000000000009']);
    expect(w.expiresAt).toBe(Date.UTC(2024, 0, 2) / 1000 + 30 * 86400);
  });
});

describe('Hrefs', () => {
  it('give event types their place under the app, and peripherals their own Href', () => {
    const type = obj({ key: 'k', collection: 'eventtypes', folder: A, path: [R, A] });
    expect(eventTypeHref(type)).toBe(`/api/f/${R}/apps/${A}/eventtypes/k`);
    expect(canonicalHref(obj({ key: 'r', collection: 'readers' }))).toBe(`/api/f/${F}/readers/r`);
    expect(canonicalHref(obj({ key: 'p' }))).toBe(`/api/f/${F}/people/p`);
  });
});

describe('eventTypeRef', () => {
  it('reads an event type Href (relative or absolute), an {Href} object or a bare key', () => {
    expect(eventTypeRef(`/api/f/${R}/apps/${A}/eventtypes/${F}`)).toEqual({ appKey: A, key: F });
    expect(eventTypeRef(`https://x.example/api/f/${R}/apps/${A.toUpperCase()}/eventtypes/${F}/`)).toEqual({ appKey: A, key: F });
    expect(eventTypeRef({ Href: `/api/f/${R}/apps/${A}/eventtypes/${F}` })).toEqual({ appKey: A, key: F });
    expect(eventTypeRef(F)).toEqual({ key: F });
    expect(() => eventTypeRef('/api/f/x/people/y')).toThrow();
    expect(() => eventTypeRef(42)).toThrow();
  });
});

describe('TtlCache', () => {
  it('forgets entries after their time, evicts the least recently used, and deletes by value', () => {
    let now = 0;
    const c = new TtlCache<number>(2, 100, () => now);
    c.set('a', 1);
    c.set('b', 2);
    c.get('a');
    c.set('c', 3);
    expect([c.get('a'), c.get('b'), c.get('c')]).toEqual([1, undefined, 3]);
    now = 100;
    expect(c.get('a')).toBeUndefined();
    c.set('d', 4);
    c.set('e', 5);
    c.deleteWhere((v) => v === 4);
    expect([c.get('d'), c.get('e')]).toEqual([undefined, 5]);
  });
});
