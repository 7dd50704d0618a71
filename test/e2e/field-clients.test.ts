/**
 * Calls recorded from clients written for the original service, replayed over HTTP against the
 * local runtime: bodies without any `$type`, 64-bit card numbers, event postings naming readers
 * through `/peripherals/<key>`, and the posting's names read back from the event.
 */
import { Long, serialize } from 'bson';
import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { fieldClient } from '../support/field-client.ts';
import { adminToken } from '../support/runtime.ts';

const url = inject('url');
const admin = inject('admin');
const NS = /^[\w.]+\.(\w+), [\w.]+$/;

const call = fieldClient(url, () => token);

const typeName = (tag: unknown): string => NS.exec(String(tag))?.[1] ?? `not a tag: ${String(tag)}`;
const suffix = randomBytes(4).toString('hex');
let token: string;
let root: string;

beforeAll(async () => {
  token = await adminToken(url, admin);
  root = admin.instanceKey;
});

describe('bodies without $type', () => {
  it('creates a person, its cards and addresses from a body without any $type, and replaces it the same way', async () => {
    const body = {
      CommonName: `Untyped ${suffix}`,
      GivenName: 'Ada',
      Surname: 'Lovelace',
      InFolderKey: root,
      Addresses: [{ MailTo: `ada-${suffix}@example.com`, Type: 'Work' }, { Number: '5550100', Type: 'Mobile' }, { Street: '1 Main St', City: 'London', PostalCode: 'N1' }],
      CardAssignments: [{ EncodedCardNumber: Number.parseInt(randomBytes(3).toString('hex'), 16), DisplayCardNumber: 'x', ActiveOn: '2024-01-01T00:00:00Z' }],
      Monikers: [{ Namespace: 'Importer', Nickname: `emp-${suffix}` }],
      Metadata: [{ Key: 'Department', Values: '"Engineering"' }],
    };

    const created = await call('POST', `/api/f/${root}/people`, body);

    expect(created.status).toBe(201);
    const p = created.body;
    expect(typeName(p.$type)).toBe('PersonInfo');
    expect(p.Addresses.map((a: any) => typeName(a.$type))).toEqual(['EmailAddressInfo', 'PhoneInfo', 'MailingAddressInfo']);
    expect(typeName(p.CardAssignments[0].$type)).toBe('CardAssignmentInfo');
    expect(typeName(p.Monikers[0].$type)).toBe('MonikerItem');
    expect(typeName(p.Metadata[0].$type)).toBe('MetadataItem');
    expect((await call('GET', p.Href)).body).toEqual(p);

    const { $type: _t, ...untypedAgain } = { ...p, Surname: 'King' };
    const replaced = await call('PUT', p.Href, untypedAgain);
    expect([replaced.status, replaced.body.Surname, typeName(replaced.body.$type)]).toEqual([200, 'King', 'PersonInfo']);
  });

  it('still refuses a $type of another collection, and an address its fields do not tell', async () => {
    const wrong = await call('POST', `/api/f/${root}/people`, { $type: 'Vendor.Model.ScheduleInfo, Vendor.Model', CommonName: 'x' });
    expect([wrong.status, wrong.body.Error]).toEqual([400, 'WrongType']);
    const vague = await call('POST', `/api/f/${root}/people`, { CommonName: 'x', Addresses: [{ MailTo: 'a@example.com' }, { Type: 'Home' }] });
    expect([vague.status, vague.body.Error]).toEqual([400, 'MissingType']);
    expect(vague.body.Message).toContain('Addresses[1]');
  });
});

describe('64-bit card numbers', () => {
  it('round-trip every digit through create, read, list, search and an unchanged PUT', async () => {
    // 2^63 - 1 minus a random offset: above 2^53, where a double would lose the last digits.
    const number = (2n ** 63n - 1n - BigInt(`0x${randomBytes(4).toString('hex')}`)).toString();
    const raw = `{"CommonName":"Card ${suffix}","CardAssignments":[{"EncodedCardNumber":${number},"FacilityCode":7}]}`;

    const created = await call('POST', `/api/f/${root}/people`, undefined, raw);

    expect(created.status).toBe(201);
    expect(created.text).toContain(`"EncodedCardNumber":${number}`);
    const href = created.body.Href as string;
    expect((await call('GET', href)).text).toContain(`"EncodedCardNumber":${number}`);
    const found = await call('POST', `/api/f/${root}/search`, `{ '_t': 'Person', 'CardAssignments.EncodedCardNumber': ${number} }`);
    expect([found.status, found.text]).toEqual([200, expect.any(String)]);
    expect(found.body.map((o: any) => o.Href)).toEqual([href]);
    expect(found.text).toContain(`"EncodedCardNumber":${number}`);
    // The same card on another person is the same card, digit for digit.
    const twin = await call('POST', `/api/f/${root}/people`, undefined, raw.replace(`Card ${suffix}`, `Twin ${suffix}`));
    expect([twin.status, twin.body.Error]).toEqual([409, 'CardIsAlreadyAssigned']);
    expect(twin.body.Message).toContain(number);
    // A client that sends back what it read changes nothing.
    const again = await call('PUT', href, undefined, (await call('GET', href)).text);
    expect(again.status).toBe(204);
  });
});

describe('events as integrations read them', () => {
  it('store a reader posted through /peripherals with its own Href, and give back the moniker and related objects', async () => {
    const reader = (await call('POST', `/api/f/${root}/readers`, { CommonName: `Door ${suffix}` })).body;
    const app = (await call('POST', `/api/f/${root}/apps`, { CommonName: `App ${suffix}`, Monikers: [{ Namespace: 'Field', Nickname: `app-${suffix}` }] })).body;
    const type = await call('PUT', `${app.Href}/eventtypes`, {
      CommonName: 'Swipe',
      Monikers: [{ Namespace: 'Field', Nickname: 'Swipe' }],
      MessageTemplateShort: 'Card {Card} at {Reader}',
      Priority: 3,
    });
    expect(type.status).toBe(201);
    const card = '9223372036854775806';

    const posted = await call('POST', `/api/f/${root}/eventmessagesink`, {
      OccurredOn: new Date().toISOString(),
      AppKey: `app-${suffix}`,
      EventTypeMoniker: { Nickname: 'Swipe' },
      RelatedObjects: [{ Relation: 'Reader', CommonName: reader.CommonName, Href: `/api/f/${root}/peripherals/${reader.Key}` }],
      EventDataBsonBase64: Buffer.from(serialize({ Card: Long.fromString(card) })).toString('base64'),
    });

    expect(posted.status).toBe(201);
    const ev = posted.body;
    expect(ev.MessageShort).toBe(`Card ${card} at ${reader.CommonName}`);
    expect(ev.ObjectLinks).toEqual([
      expect.objectContaining({ Href: reader.Href, LinkedObjectKey: reader.Key, Relation: 'Reader', CommonName: reader.CommonName }),
    ]);
    expect(ev.RelatedObjects).toEqual(ev.ObjectLinks);
    expect(ev.EventTypeMoniker).toEqual({ $type: expect.stringMatching(/\.MonikerItem, /), Namespace: 'Field', Nickname: 'Swipe' });
    // The reader's own creation is an (audit) event of the reader too.
    const listed = await call('GET', `/api/f/${root}/events?forKeys=${reader.Key}`);
    expect(listed.body.find((x: any) => x.Key === ev.Key)).toEqual(ev);
    expect((await call('GET', ev.Href)).body).toEqual(ev);
  });
});
