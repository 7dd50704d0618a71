/**
 * Doors end to end on the local runtime (issue 37): a lockdown of a folder is "Lockdown Started"
 * on the JSON WebSocket and over MQTT, requiring acknowledgement, and the next decision below it
 * is denied; its end is "Lockdown Ended"; a momentary unlock is "Door Unlocked" live, a mode
 * "Reader Mode Changed"; and the credential download's version follows a write through the
 * runtime's own stream fan-out (If-None-Match 304 before it, the change through `since` after it).
 */
import { randomBytes } from 'node:crypto';
import { deserialize } from 'bson';
import mqtt, { type MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { adminToken, openLiveClient, type LiveClient } from '../support/runtime.ts';
import { waitFor } from '../support/webhook-receiver.ts';
import { e2eCalls } from '../support/e2e-calls.ts';

const url = inject('url');
const wsUrl = inject('wsUrl');
const admin = inject('admin');
const mqttUrl = wsUrl.replace(/\/events$/, '/mqtt');
const unique = (p: string) => `${p}-${randomBytes(4).toString('hex')}`;

let token: string;
let I: string;
let ws: LiveClient | undefined;
let mq: MqttClient | undefined;

const { call, ok } = e2eCalls(url, () => token);

/** The next event of that MessageShort on the WebSocket (subscribed in the first test). */
async function next(short: string): Promise<any> {
  for (;;) {
    const m = await ws!.next(3_000);
    if (!m) throw new Error(`no ${short} on the WebSocket`);
    if (m.type === 'event' && m.event.MessageShort === short) return m.event;
  }
}

let folder: any;
let door: any;
let reader: any;
let controller: any;
const cardNumber = 5_200_000 + Math.floor(Math.random() * 1_000_000);

beforeAll(async () => {
  token = await adminToken(url, admin);
  I = admin.instanceKey;
  folder = await ok('POST', `/api/f/${I}/folders`, { $type: 'FolderInfo', CommonName: unique('Building') });
  const schedule = await ok('POST', `/api/f/${I}/schedules`, { $type: 'ScheduleInfo', CommonName: unique('Always'), IsAlways: true });
  controller = await ok('POST', `/api/f/${folder.Key}/controllers`, { $type: 'Lp1502Info', CommonName: unique('Panel') });
  door = await ok('POST', `/api/f/${folder.Key}/doors`, { $type: 'DoorInfo', CommonName: unique('Door') });
  reader = await ok('POST', `/api/f/${folder.Key}/readers`, { $type: 'VendorReaderInfo', CommonName: unique('Reader') });
  await ok('POST', `/api/f/${folder.Key}/readers/${reader.Key}/connections/Door?relatedKey=${door.Key}`, undefined, 200);
  await ok('POST', `/api/f/${folder.Key}/readers/${reader.Key}/connections/Controller?relatedKey=${controller.Key}`, undefined, 200);
  const level = await ok('POST', `/api/f/${I}/accesslevels`, { $type: 'AccessLevelInfo', CommonName: unique('Staff'), AccessLevelEntries: [{ ReaderId: reader.Key, ScheduleId: schedule.Key }] });
  const person = await ok('POST', `/api/f/${I}/people`, { $type: 'PersonInfo', CommonName: unique('Ada'), CardAssignments: [{ EncodedCardNumber: cardNumber }] });
  await ok('POST', `/api/f/${I}/people/${person.Key}/connections/AccessLevel?relatedKey=${level.Key}`, undefined, 200);
}, 60_000);

afterAll(async () => {
  await ws?.close();
  await mq?.endAsync(true).catch(() => {});
});

describe('doors on the local runtime', () => {
  it('publishes Lockdown Started and Ended live (WebSocket, MQTT), denies below it meanwhile, and Door Unlocked after', async () => {
    const topics = [`/${I}/${folder.Key}`, `/${I}/${door.Key}`];
    ws = await openLiveClient(wsUrl, { token });
    for (const topic of topics) {
      ws.send({ action: 'subscribe', topic });
      for (let m = await ws.next(10_000); m?.type !== 'subscribed'; m = await ws.next(10_000));
    }
    mq = await mqtt.connectAsync(mqttUrl, { protocolVersion: 4, clean: true, clientId: unique('doors'), reconnectPeriod: 0, username: token });
    const overMqtt: any[] = [];
    mq.on('message', (_t, payload) => overMqtt.push(deserialize(payload)));
    for (const topic of topics) await mq.subscribeAsync(topic);

    const started = Date.now();
    const lockdown = await ok('POST', `/api/f/${folder.Key}/lockdown`, { Reason: 'Drill' });
    expect(lockdown).toMatchObject({ InEffect: true, Lockdown: { Reason: 'Drill' } });
    const live = await next('Lockdown Started');
    expect(Date.now() - started).toBeLessThan(2_500);
    expect(live).toMatchObject({ EventTypeMoniker: { Namespace: 'MercuryService', Nickname: 'lockdown-started' }, RequiresAcknowledgement: true, InFolderKey: folder.Key, Priority: 50 });
    expect(deserialize(Buffer.from(live.EventDataBsonBase64, 'base64'))).toMatchObject({ Folder: { Key: folder.Key }, Reason: 'Drill' });
    expect(await waitFor(() => overMqtt.some((e) => e.Key === live.Key), 2_000)).toBe(true);

    const denied = await call('POST', `/api/f/${I}/accessdecisions`, { ReaderKey: reader.Key, EncodedCardNumber: cardNumber });
    expect(denied.body).toMatchObject({ Granted: false, Reason: 'ReaderLockedDown' });
    const refused = await call('POST', `/api/f/${folder.Key}/doors/${door.Key}/unlock`, { Seconds: 3 });
    expect(refused.status).toBe(409);
    expect(refused.body.Error).toBe('LockedDown');

    await ok('DELETE', `/api/f/${folder.Key}/lockdown`, undefined, 200);
    expect(await next('Lockdown Ended')).toMatchObject({ EventTypeMoniker: { Nickname: 'lockdown-ended' }, RequiresAcknowledgement: false });
    expect((await call('POST', `/api/f/${I}/accessdecisions`, { ReaderKey: reader.Key, EncodedCardNumber: cardNumber })).body.Reason).toBe('Granted');

    const status = await ok('POST', `/api/f/${folder.Key}/doors/${door.Key}/unlock`, { Seconds: 3 }, 200);
    expect(status).toMatchObject({ Door: { Key: door.Key }, LockedDown: null });
    const unlocked = await next('Door Unlocked');
    expect(deserialize(Buffer.from(unlocked.EventDataBsonBase64, 'base64'))).toMatchObject({ Door: { Key: door.Key }, Seconds: 3 });
  });

  it('versions the credential download through the runtime\'s stream fan-out', async () => {
    const path = `/api/f/${folder.Key}/controllers/${controller.Key}/credentials`;
    const full = await call('GET', path);
    expect(full.status, full.text).toBe(200);
    expect(full.body.Cards.map((c: any) => c.EncodedCardNumber)).toEqual([String(cardNumber)]);
    expect((await call('GET', path, undefined, { 'if-none-match': `"${full.body.Version}"` })).status).toBe(304);
    // A mode set on the reader: counted once the fan-out has read it from the stream.
    await ok('PUT', `/api/f/${folder.Key}/readers/${reader.Key}/mode`, { AccessMethod: 5 }, 200);
    // Live on the door's topic too (the event relates the reader and its door).
    const changed = await next('Reader Mode Changed');
    expect(deserialize(Buffer.from(changed.EventDataBsonBase64, 'base64'))).toMatchObject({ Reader: { Key: reader.Key }, From: 0, To: 5, Until: null });
    expect(await waitFor(async () => (await call('GET', path, undefined, { 'if-none-match': full.body.Version })).status === 200, 5_000)).toBe(true);
    const since = await call('GET', `${path}?since=${full.body.Version}`);
    expect(since.body).toMatchObject({ Incremental: true, Cards: [] });
    expect(since.body.Readers[0]).toMatchObject({ Key: reader.Key, SetMode: { AccessMethod: 5, Until: null } });
  });
});
