/**
 * Scheduled access levels as field clients send them, over HTTP against the local runtime: the
 * `scheduledaccesslevelbatch` PUT with MetaDataBson built by `bson`'s serialize, the connect PUT
 * with `isOneToOne=False&relatedKey=...&addAsTag=false` and a JSON window, the person's
 * ObjectLinks, the list of one relation, and the disconnect.
 */
import { deserialize, serialize } from 'bson';
import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { fieldClient } from '../support/field-client.ts';
import { adminToken } from '../support/runtime.ts';

const url = inject('url');
const admin = inject('admin');
const REL = 'ScheduledAccessLevel';

const call = fieldClient(url, () => token);

const metaDataBson = (doc: { ActiveOn: Date | null; ExpiresOn: Date | null }): string => Buffer.from(serialize(doc)).toString('base64');
const windowIn = (link: any) => deserialize(Buffer.from(link.MetaDataBson as string, 'base64'));
const suffix = randomBytes(4).toString('hex');
let token: string;
let root: string;

async function create(collection: string, body: Record<string, unknown>): Promise<any> {
  const res = await call('POST', `/api/f/${root}/${collection}`, body);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

beforeAll(async () => {
  token = await adminToken(url, admin);
  root = admin.instanceKey;
});

describe('scheduled access levels over HTTP', () => {
  it('replaces them with a scheduledaccesslevelbatch whose MetaDataBson is BSON with dates', async () => {
    const person = await create('people', { CommonName: `Scheduled ${suffix}`, GivenName: 'Sam' });
    const day = await create('accesslevels', { CommonName: `Day shift ${suffix}` });
    const night = await create('accesslevels', { CommonName: `Night shift ${suffix}` });
    const activeOn = new Date('2026-02-01T06:00:00.000Z');
    const expiresOn = new Date('2026-08-01T18:00:00.000Z');

    const res = await call('PUT', `${person.Href}/scheduledaccesslevelbatch`, [
      { Relation: REL, LinkedObjectKey: day.Key, MetaDataBson: metaDataBson({ ActiveOn: activeOn, ExpiresOn: expiresOn }) },
      { Relation: REL, LinkedObjectKey: night.Key, MetaDataBson: metaDataBson({ ActiveOn: null, ExpiresOn: expiresOn }) },
    ]);

    expect(res.status).toBe(204);
    const read = (await call('GET', person.Href)).body;
    const links = read.ObjectLinks.filter((l: any) => l.Relation === REL);
    expect(links.map((l: any) => [l.LinkedObjectKey, l.CommonName, l.Href])).toEqual([
      [day.Key, day.CommonName, day.Href],
      [night.Key, night.CommonName, night.Href],
    ]);
    expect(windowIn(links[0])).toEqual({ ActiveOn: activeOn, ExpiresOn: expiresOn });
    expect(windowIn(links[1])).toEqual({ ActiveOn: null, ExpiresOn: expiresOn });
    const listed = await call('GET', `${person.Href}/connections/${REL}`);
    expect([listed.status, listed.body.map((o: any) => o.Key).sort()]).toEqual([200, [day.Key, night.Key].sort()]);

    const again = await call('PUT', `${person.Href}/scheduledaccesslevelbatch`, [
      { Relation: REL, LinkedObjectKey: night.Key, MetaDataBson: metaDataBson({ ActiveOn: null, ExpiresOn: expiresOn }) },
    ]);
    expect(again.status).toBe(204);
    expect((await call('GET', `${person.Href}/connections/${REL}`)).body.map((o: any) => o.Key)).toEqual([night.Key]);

    const bad = await call('PUT', `${person.Href}/scheduledaccesslevelbatch`, [{ Relation: REL, LinkedObjectKey: day.Key, MetaDataBson: 'bm90IGJzb24=' }]);
    expect([bad.status, bad.body.Error]).toEqual([400, 'InvalidMetaData']);
  });

  it('connects with PUT connections/ScheduledAccessLevel?isOneToOne=False&relatedKey=...&addAsTag=false and a JSON window', async () => {
    const person = await create('people', { CommonName: `Connected ${suffix}` });
    const level = await create('accesslevels', { CommonName: `Contractors ${suffix}` });

    const res = await call('PUT', `${person.Href}/connections/${REL}?isOneToOne=False&relatedKey=${level.Key}&addAsTag=false`, {
      ActiveOn: '2026-03-01T00:00:00Z',
      ExpiresOn: '2026-03-31T23:59:59Z',
    });

    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const link = res.body.ObjectLinks.find((l: any) => l.Relation === REL);
    expect(link).toMatchObject({ LinkedObjectKey: level.Key, CommonName: level.CommonName, Href: level.Href });
    expect(windowIn(link)).toEqual({ ActiveOn: new Date('2026-03-01T00:00:00Z'), ExpiresOn: new Date('2026-03-31T23:59:59Z') });
    expect((await call('GET', person.Href)).body.ObjectLinks).toContainEqual(link);
    expect((await call('GET', `${person.Href}/connections`)).body.map((o: any) => o.Key)).toEqual([level.Key]);

    const reversed = await call('POST', `${person.Href}/connections/${REL}?isOneToOne=True&relatedKey=${level.Key}`, {
      ActiveOn: '2026-04-01T00:00:00Z',
      ExpiresOn: '2026-03-01T00:00:00Z',
    });
    expect([reversed.status, reversed.body.Error]).toEqual([400, 'InvalidWindow']);

    const removed = await call('DELETE', `${person.Href}/connections/${REL}/${level.Key}`);
    expect(removed.status).toBe(204);
    expect((await call('GET', `${person.Href}/connections/${REL}`)).body).toEqual([]);
    expect((await call('GET', person.Href)).body.ObjectLinks.filter((l: any) => l.Relation === REL)).toEqual([]);
  });
});
