/**
 * The local runtime answers what docs/openapi.json says: a client's session (login, its
 * instance, people with cards and notes, an access level, search, events, the public calls and
 * the usual mistakes) with every response checked by the shared validator — declared status,
 * declared Content-Type, body valid against the schema. The run's report prints how many
 * responses were validated per operation and lists the operations no test exercised.
 */
import { request } from 'node:http';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { sharedValidator } from '../support/openapi-validator.ts';

const url = inject('url');
const admin = inject('admin');
const validator = sharedValidator();

interface Sent {
  readonly status: number;
  readonly contentType: string | undefined;
  readonly text: string;
  readonly json: any;
}

let token = '';

/** Sends a request (node:http: GET bodies too) and checks the response against the document. */
async function call(method: string, path: string, opts: { body?: unknown; raw?: string; form?: Record<string, string>; auth?: boolean } = {}): Promise<Sent> {
  const sent = await send(method, path, opts);
  const problems = validator.check({ method, path: path.split('?')[0]!, status: sent.status, contentType: sent.contentType, text: sent.text });
  expect(problems, `${method} ${path} → ${sent.status}`).toEqual([]);
  return sent;
}

function send(method: string, path: string, opts: { body?: unknown; raw?: string; form?: Record<string, string>; auth?: boolean }): Promise<Sent> {
  const headers: Record<string, string> = {};
  let data: Buffer | undefined;
  if (opts.form) {
    data = Buffer.from(new URLSearchParams(opts.form).toString());
    headers['content-type'] = 'application/x-www-form-urlencoded';
  } else if (opts.raw !== undefined || opts.body !== undefined) {
    data = Buffer.from(opts.raw ?? JSON.stringify(opts.body));
    headers['content-type'] = 'application/json';
  }
  if (data) headers['content-length'] = String(data.length);
  if (opts.auth !== false && token) headers.authorization = `Bearer ${token}`;
  return new Promise((resolve, reject) => {
    const req = request(`${url}${path}`, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const contentType = res.headers['content-type'];
        let json: unknown;
        try {
          json = text ? JSON.parse(text) : undefined;
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, contentType, text, json });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(data);
  });
}

const unique = () => randomBytes(4).toString('hex');

describe('responses match the OpenAPI document', () => {
  let instance = '';

  beforeAll(async () => {
    const login = await call('POST', '/token', {
      form: { grant_type: 'password', client_id: admin.clientId, client_secret: admin.clientSecret, instance: admin.instanceName, username: admin.userName, password: admin.password },
    });
    expect(login.status).toBe(200);
    token = login.json.access_token;
    instance = admin.instanceKey;
  });

  // The run's report (test/support/openapi-coverage-reporter.ts) lists the counts per operation.
  afterAll(() => {
    const total = [...validator.counts.values()].reduce((a, b) => a + b, 0);
    console.info(`[e2e/openapi-responses] ${total} responses over ${validator.counts.size} operations validated against docs/openapi.json`);
  });

  it('answers the public calls and the token errors as described', async () => {
    expect((await call('GET', '/api/sysinfo', { auth: false })).status).toBe(200);
    expect((await call('GET', '/.well-known/jwks.json', { auth: false })).status).toBe(200);
    expect((await call('GET', '/api/openapi.json', { auth: false })).status).toBe(200);
    expect((await call('GET', '/docs', { auth: false })).status).toBe(200);
    const wrong = await call('POST', '/token', { form: { grant_type: 'password', instance: admin.instanceName, username: admin.userName, password: 'wrong' } });
    expect(wrong.status).toBe(400);
    expect((await call('POST', '/token', { form: { grant_type: 'client_credentials' } })).status).toBe(400);
    expect((await call('GET', '/api', { auth: false })).status).toBe(401);
  });

  it('answers a person\'s life cycle as described', async () => {
    expect((await call('GET', '/api')).status).toBe(200);
    const people = `/api/f/${instance}/people`;
    const card = Number.parseInt(randomBytes(3).toString('hex'), 16) + 10_000_000;
    // Without $type, as field clients send it: read as a PersonInfo.
    const created = await call('POST', people, {
      body: {
        CommonName: `Ada ${unique()}`,
        GivenName: 'Ada',
        Surname: 'Lovelace',
        Addresses: [{ MailTo: 'ada@example.com', Type: 'Work' }],
        CardAssignments: [{ EncodedCardNumber: card, DisplayCardNumber: String(card) }],
        FacilityCode: 12,
      },
    });
    expect(created.status).toBe(201);
    const href: string = created.json.Href;

    expect((await call('GET', `${people}?page=0&pageSize=5`)).status).toBe(200);
    const read = await call('GET', href);
    expect(read.status).toBe(200);
    const replaced = await call('PUT', href, { body: { ...read.json, Surname: 'Byron' } });
    expect(replaced.status).toBe(200);
    expect((await call('PUT', href, { body: replaced.json })).status).toBe(204);

    const note = await call('POST', `${href}/notes`, { body: { NoteText: 'Checked on site.' } });
    expect(note.status).toBe(201);
    expect((await call('GET', `${href}/notes`)).status).toBe(200);
    expect((await call('GET', `${href}/monikers`)).status).toBe(200);
    expect((await call('DELETE', `${href}/notes/${note.json.Key}`)).status).toBe(204);
    expect((await call('POST', `${href}/takeownership`)).status).toBe(204);
    expect((await call('GET', `${href}/takeownership`)).status).toBe(405);

    const level = await call('POST', `/api/f/${instance}/accesslevels`, { body: { $type: 'Gatehouse.Model.AccessLevelInfo, Gatehouse.Model', CommonName: `Level ${unique()}` } });
    expect(level.status).toBe(201);
    expect((await call('PUT', `${href}/accesslevels`, { body: level.json.Href })).status).toBe(204);
    expect((await call('GET', `${href}/connections`)).status).toBe(200);
    expect((await call('DELETE', `${href}/connections/AccessLevel/${level.json.Key}`)).status).toBe(204);

    expect((await call('POST', `/api/f/${instance}/search?pageSize=5`, { body: JSON.stringify({ _t: 'Person', Surname: 'Byron' }) })).status).toBe(200);
    expect((await call('GET', `/api/f/${instance}/events?pageSize=5`)).status).toBe(200);
    expect((await call('GET', `/api/f/${instance}/lastevent`, { body: [read.json.Key] })).status).toBe(200);

    expect((await call('DELETE', href)).status).toBe(204);
    expect((await call('GET', href)).status).toBe(404);
    expect((await call('DELETE', level.json.Href)).status).toBe(204);
  });

  it('answers the event calls, GET-with-body forms and their twins included, as described', async () => {
    const base = `/api/f/${instance}`;
    const app = await call('POST', `${base}/apps`, { body: { CommonName: `App ${unique()}` } });
    expect(app.status).toBe(201);
    const nickname = `alarm-${unique()}`;
    const type = await call('PUT', `${app.json.Href}/eventtypes`, {
      body: { CommonName: 'Door forced', Priority: 10, RequiresAcknowledgement: true, Monikers: [{ Namespace: 'acme', Nickname: nickname }] },
    });
    expect(type.status).toBe(201);
    expect((await call('GET', `${app.json.Href}/eventtypes?namespace=acme&nickname=${nickname}`)).status).toBe(200);
    expect((await call('GET', type.json.Href)).status).toBe(200);
    // The spec's update form (a GET with a body), then its PUT twin.
    expect((await call('GET', type.json.Href, { body: { ...type.json, MessageTemplateShort: 'Door forced' } })).status).toBe(204);
    const current = await call('GET', type.json.Href);
    expect((await call('PUT', type.json.Href, { body: { ...current.json, Priority: 11 } })).status).toBe(204);
    expect((await call('GET', `${type.json.Href}/meta`)).status).toBe(200);

    const alarm = await call('POST', `${base}/alarmdefinitions`, { body: { CommonName: `Alarm ${unique()}` } });
    expect(alarm.status).toBe(201);
    expect((await call('PUT', `${alarm.json.Href}/collections/eventtypes`, { body: type.json.Href })).status).toBe(204);
    expect((await call('GET', `${alarm.json.Href}/collections/eventtypes`)).status).toBe(200);

    const door = await call('POST', `${base}/doors`, { body: { CommonName: `Door ${unique()}` } });
    const published = await call('POST', `${base}/eventmessagesink`, {
      body: { OccurredOn: new Date().toISOString(), AppKey: app.json.Key, EventTypeMoniker: { Namespace: 'acme', Nickname: nickname }, RelatedObjects: [{ LinkedObjectKey: door.json.Key, Relation: 'Door' }] },
    });
    expect(published.status).toBe(201);
    expect((await call('GET', published.json.Href)).status).toBe(200);
    expect((await call('GET', `${published.json.Href}/connections`)).status).toBe(200);
    expect((await call('POST', `${published.json.Href}/acknowledgements`, { body: { Comment: 'Guard sent.' } })).status).toBe(201);
    expect((await call('GET', `${base}/events?requiresAck=false&priorityThreshold=5&forKeys=${door.json.Key}`)).status).toBe(200);
    // lastevent: the spec's GET with a body, and its POST twin.
    expect((await call('GET', `${base}/lastevent`, { body: [door.json.Key] })).status).toBe(200);
    expect((await call('POST', `${base}/lastevent?since=2020-01-01T00:00:00Z`, { body: [door.json.Key] })).status).toBe(200);

    expect((await call('DELETE', `${alarm.json.Href}/collections/eventtypes/${type.json.Key}`)).status).toBe(204);
    expect((await call('DELETE', type.json.Href)).status).toBe(204);
    expect((await call('GET', type.json.Href)).status).toBe(404);
  });

  it('answers a refresh and the folder-level calls as described', async () => {
    const login = await send('POST', '/token', {
      form: { grant_type: 'password', client_id: admin.clientId, client_secret: admin.clientSecret, instance: admin.instanceName, username: admin.userName, password: admin.password },
    });
    const refreshed = await call('POST', '/token', { form: { grant_type: 'refresh_token', client_id: admin.clientId, client_secret: admin.clientSecret, refresh_token: login.json.refresh_token } });
    expect(refreshed.status).toBe(200);
    expect((await call('POST', '/token', { form: { grant_type: 'refresh_token', refresh_token: login.json.refresh_token } })).status).toBe(400);

    const folder = await call('POST', `/api/f/${instance}/folders`, { body: { CommonName: `Folder ${unique()}` } });
    expect(folder.status).toBe(201);
    expect((await call('GET', folder.json.Href)).status).toBe(200);
    const note = await call('POST', `${folder.json.Href}/notes`, { body: { NoteText: 'Second floor.' } });
    expect(note.status).toBe(201);
    expect((await call('GET', `${folder.json.Href}/notes`)).status).toBe(200);
    expect((await call('DELETE', `${folder.json.Href}/notes/${note.json.Key}`)).status).toBe(204);
    const read = await call('GET', folder.json.Href);
    expect([200, 204]).toContain((await call('PUT', folder.json.Href, { body: { ...read.json, CommonName: `${read.json.CommonName} B` } })).status);

    const reader = await call('POST', `${folder.json.Href}/readers`, { body: { CommonName: `Reader ${unique()}` } });
    expect(reader.status).toBe(201);
    expect((await call('GET', `${folder.json.Href}/peripherals/${reader.json.Key}`)).status).toBe(200);
    expect((await call('GET', `${folder.json.Href}/peripherals/${reader.json.Key}/monikers`)).status).toBe(200);
    const level = await call('POST', `/api/f/${instance}/accesslevels`, { body: { CommonName: `Level ${unique()}` } });
    expect((await call('POST', `${level.json.Href}/connections/Reader?relatedKey=${reader.json.Key}`)).status).toBe(200);
    expect((await call('DELETE', `${level.json.Href}/connections/Reader/${reader.json.Key}`)).status).toBe(204);
    expect((await call('DELETE', reader.json.Href)).status).toBe(204);
    expect((await call('DELETE', level.json.Href)).status).toBe(204);
    expect((await call('DELETE', folder.json.Href)).status).toBe(204);
  });

  it('answers the usual mistakes with the declared error statuses and bodies', async () => {
    const people = `/api/f/${instance}/people`;
    expect((await call('POST', people, { raw: '{"CommonName":' })).status).toBe(400);
    expect((await call('POST', people, { body: { $type: 'DoorInfo', CommonName: 'x' } })).status).toBe(400);
    expect((await call('GET', `${people}?pageSize=5000`)).status).toBe(400);
    expect((await call('GET', `/api/f/${'0'.repeat(24)}/people`)).status).toBeGreaterThanOrEqual(403);
    expect((await call('GET', '/api', { auth: false })).status).toBe(401);
  });

  it('found no response that the document does not describe', () => {
    expect(validator.mismatches).toEqual([]);
    expect(validator.counts.size).toBeGreaterThan(20);
  });
});
