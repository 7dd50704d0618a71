/**
 * Aggregation over HTTP against the local runtime, with the body the C# client sends: a JSON
 * array of JSON-encoded stage strings, `{"$date": ...}` and `$regex` on
 * `EventData.Reader.CommonName`.
 */
import { Long, serialize } from 'bson';
import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { fieldClient } from '../support/field-client.ts';
import { adminToken } from '../support/runtime.ts';

const url = inject('url');
const admin = inject('admin');
const suffix = randomBytes(4).toString('hex');
let token: string;
let folder: string;

const call = fieldClient(url, () => token);

const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000).toISOString();

beforeAll(async () => {
  token = await adminToken(url, admin);
  const root = admin.instanceKey;
  const f = await call('POST', `/api/f/${root}/folders`, { CommonName: `Aggregate ${suffix}` });
  expect(f.status).toBe(201);
  folder = f.body.Key;
  const app = await call('POST', `/api/f/${root}/apps`, { CommonName: `Agg app ${suffix}`, Monikers: [{ Namespace: 'Field', Nickname: `agg-${suffix}` }] });
  expect(app.status).toBe(201);
  const type = await call('PUT', `${app.body.Href}/eventtypes`, { CommonName: 'Swipe', Monikers: [{ Namespace: 'Field', Nickname: 'Swipe' }], Priority: 3 });
  expect(type.status).toBe(201);
  const swipes: Array<[string, string]> = [
    ['Front door', '9223372036854775807'],
    ['Front door', '9223372036854775807'],
    ['Front lobby', '9223372036854775806'],
    ['Back door', '9223372036854775805'],
  ];
  for (const [i, [reader, card]] of swipes.entries()) {
    const posted = await call('POST', `/api/f/${folder}/eventmessagesink`, {
      OccurredOn: minutesAgo(10 + i),
      AppKey: `agg-${suffix}`,
      EventTypeMoniker: { Nickname: 'Swipe' },
      RelatedObjects: [],
      EventDataBsonBase64: Buffer.from(serialize({ Reader: { CommonName: reader }, Card: Long.fromString(card) })).toString('base64'),
    });
    expect(posted.status, posted.text).toBe(201);
  }
});

describe('POST /api/f/<folder>/aggregate/Events', () => {
  it('answers the C# client\'s pipeline of JSON-encoded stage strings', async () => {
    const body = [
      '{"$match":{"OccurredOn":{"$gte":{"$date":"2026-11-01T00:00:00Z"}},"EventData.Reader.CommonName":{"$regex":"^Front"}}}',
      '{"$group":{"_id":"$EventData.Reader.CommonName","count":{"$sum":1}}}',
    ];
    const r = await call('POST', `/api/f/${folder}/aggregate/Events?queryTimeout=30`, body);
    expect(r.status, r.text).toBe(200);
    expect(r.body.sort((a: any, b: any) => a._id.localeCompare(b._id))).toEqual([
      { _id: 'Front door', count: 2 },
      { _id: 'Front lobby', count: 1 },
    ]);
  });

  it('answers 64-bit card numbers with every digit, and the lower-case path too', async () => {
    const body = [
      '{"$match":{"OccurredOn":{"$gte":{"$date":"2026-11-01T00:00:00Z"}},"EventData.Reader.CommonName":{"$regex":"^front","$options":"i"}}}',
      '{"$group":{"_id":"$EventData.Card","n":{"$sum":1}}}',
      '{"$sort":{"n":-1}}',
    ];
    const r = await call('POST', `/api/f/${folder}/aggregate/events`, body);
    expect(r.status, r.text).toBe(200);
    expect(r.text).toBe('[{"_id":9223372036854775807,"n":2},{"_id":9223372036854775806,"n":1}]');
  });

  it('refuses a stage that writes with 400 InvalidQuery, and other folders\' events never appear', async () => {
    const refused = await call('POST', `/api/f/${folder}/aggregate/Events`, ['{"$out":"copy"}']);
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({ Error: 'InvalidQuery', Message: expect.stringContaining('$out') });
    const other = await call('POST', `/api/f/${admin.instanceKey}/folders`, { CommonName: `Empty ${suffix}` });
    const none = await call('POST', `/api/f/${other.body.Key}/aggregate/Events`, ['{"$project":{"Key":1}}']);
    expect(none.status, none.text).toBe(200);
    expect(none.body).toEqual([]);
  });
});
