/**
 * The table declared as data (shared/db/table.ts) and the key builders made from it
 * (shared/db/item-keys.ts): the declaration is coherent with the table's indexes and TTL, the
 * builders fill templates as written, and every key keeps the spelling stored items already have.
 */
import { describe, expect, it } from 'vitest';
import * as keys from '#shared/db/item-keys.ts';
import { ITEM_KINDS, TABLE, type ItemKind } from '#shared/db/table.ts';

const kinds = Object.entries(ITEM_KINDS) as Array<[string, ItemKind]>;

describe('the table declaration', () => {
  it('names only indexes the table has, and gives each kind a meaning and both key templates', () => {
    const indexes = new Set(TABLE.indexes.map((i) => i.name));
    for (const [name, kind] of kinds) {
      expect(kind.meaning.length, name).toBeGreaterThan(10);
      expect(kind.pk, name).not.toBe('');
      expect(kind.sk, name).not.toBe('');
      for (const index of Object.keys(kind.indexes ?? {})) expect(indexes.has(index), `${name}: ${index}`).toBe(true);
    }
  });

  it('keeps the queue table’s jobs out of the main table’s indexes', () => {
    for (const [name, kind] of kinds) if (kind.table === 'webhook-queue') expect(kind.indexes, name).toBeUndefined();
  });

  it('tells two kinds of the same partition apart by their sort keys', () => {
    // Kinds sharing a partition template (an object's `O#<key>`) must never share a sort key's
    // literal beginning, or a Query of one would read the other.
    const byPk = new Map<string, string[]>();
    for (const [, kind] of kinds) {
      if (kind.table) continue;
      const pk = kind.pk.replace(/<[^>]*>/g, '<>');
      byPk.set(pk, [...(byPk.get(pk) ?? []), keys.prefixOf(kind.sk)]);
    }
    // An event is an object (same key, `A`): the only deliberate overlap.
    const objects = byPk.get('O#<>')!.filter((sk, i, all) => all.indexOf(sk) === i);
    expect(objects.sort()).toEqual(['A', 'ALARM#', 'AUTH', 'GONE', 'IDPSECRET', 'MODE', 'R#', 'STATUS', 'UNLOCK']);
    for (const [pk, sks] of byPk) {
      if (pk === 'O#<>') continue;
      const literal = sks.filter((s) => s !== '');
      expect(new Set(literal).size, pk).toBe(literal.length);
    }
  });
});

describe('key builders', () => {
  it('fill a template’s holes in order, and cut a prefix before the next hole', () => {
    expect(keys.keyOf('X#<a>#<b>')('1', '2')).toBe('X#1#2');
    expect(keys.keyOf('<a>')('v')).toBe('v');
    expect(keys.keyOf('Z')()).toBe('Z');
    expect(keys.prefixOf('R#<relation>#<toKey>')).toBe('R#');
    expect(keys.prefixOf('R#<relation>#<toKey>', 'x')).toBe('R#x#');
    expect(keys.prefixOf('R#<relation>#<toKey>', 'x', 'y')).toBe('R#x#y');
    expect(() => keys.prefixOf('R#<relation>#<toKey>', 'x', 'y', 'z')).toThrow(RangeError);
  });

  it('spell every key as the items already stored spell it', () => {
    expect(keys.objectPk('k')).toBe('O#k');
    expect([keys.OBJECT_SK, keys.AUTH_SK, keys.STATUS_SK, keys.TOMBSTONE_SK, keys.CLAIM_SK]).toEqual(['A', 'AUTH', 'STATUS', 'GONE', 'U']);
    expect(keys.collectionPk('f', 'people')).toBe('C#f#people');
    expect(keys.partitionPk('i', 'people')).toBe('T#i#people');
    expect(keys.namePk('i')).toBe('N#i');
    expect(keys.nameSk('Ann', 'k')).toBe('Ann#k');
    expect(keys.cardNumberPk('i', '123')).toBe('CN#i#123');
    expect(keys.relationSk('rel', 'to')).toBe('R#rel#to');
    expect([keys.relationPrefix('rel'), keys.relationPrefix()]).toEqual(['R#rel#', 'R#']);
    expect(keys.referencedByPk('to')).toBe('RB#to');
    expect(keys.referencedBySk('rel', 'from')).toBe('rel#from');
    expect([keys.alarmLinkSk('a'), keys.ALARM_LINK_PREFIX, keys.alarmMembersPk('a')]).toEqual(['ALARM#a', 'ALARM#', 'AL#a']);
    expect(keys.claimPk('i', 'card', ':123')).toBe('U#i#card#:123');
    expect([keys.refreshTokenPk('h'), keys.refreshFamilyPk('f'), keys.REFRESH_SK]).toEqual(['RT#h', 'RTF#f', 'RT']);
    expect([keys.loginNamePk('i', 'n'), keys.LOGIN_NAME_SK]).toEqual(['LN#i#n', 'LN']);
    expect([keys.eventFolderPk('f'), keys.eventSortKey('2026-01-01T00:00:00.000Z', 'e'), keys.eventPointerPk('o')]).toEqual([
      'EV#f',
      '2026-01-01T00:00:00.000Z#e',
      'EP#o',
    ]);
    expect([keys.liveEventPk('e'), keys.LIVE_EVENT_PREFIX]).toEqual(['LIVE#e', 'LIVE#']);
    expect([keys.wsConnectionPk('c'), keys.WS_CONNECTION_SK, keys.userConnectionsPk('u')]).toEqual(['WSC#c', 'C', 'WSU#u']);
    expect([keys.mqttClientPk('c'), keys.MQTT_CLIENT_SK, keys.userMqttClientsPk('u')]).toEqual(['MQC#c', 'C', 'MQU#u']);
    expect([keys.subscriptionPk('i'), keys.subscriptionSk('c', 't/x')]).toEqual(['SUB#i', 'c#t/x']);
    expect([keys.webhookPk('i'), keys.webhookAttemptPk('w'), keys.webhookReplayPk('w'), keys.WEBHOOK_REPLAY_SK]).toEqual(['WH#i', 'WD#w', 'WR#w', 'R']);
    expect([keys.WEBHOOK_QUEUE_PK, keys.webhookQueueSk(1234.9, 'j'), keys.webhookQueueSk(-5, 'j')]).toEqual(['WQ', '000000000001234#j', '000000000000000#j']);
    expect([keys.usagePk('i'), keys.usageDaySk('2026-05-01'), keys.USAGE_TOTAL_SK]).toEqual(['US#i', 'D#2026-05-01', 'TOTAL']);
    expect([keys.PUBLIC_KEYS_PK, keys.PUBLIC_KEYS_SK]).toEqual(['KEYS', 'JWKS']);
    expect([keys.IDEMPOTENCY_PREFIX, keys.IDEMPOTENCY_SK]).toEqual(['IK', 'IK']);
  });
});
