/**
 * A card read end to end on the local runtime: the original service's command posted to the event
 * sink (`MercuryCommands` / `mercury:command-simulateCardRead`, present in every installation
 * without being created) becomes "Access Granted" on the JSON WebSocket, over MQTT and at a
 * webhook receiver within 2 s, its BSON data decoded; and `POST accessdecisions` over HTTP.
 */
import { randomBytes } from 'node:crypto';
import { deserialize, serialize } from 'bson';
import mqtt, { type MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { adminToken, openLiveClient, type LiveClient } from '../support/runtime.ts';
import { WebhookReceiver, waitFor } from '../support/webhook-receiver.ts';
import { e2eCalls } from '../support/e2e-calls.ts';

const url = inject('url');
const wsUrl = inject('wsUrl');
const admin = inject('admin');
const mqttUrl = wsUrl.replace(/\/events$/, '/mqtt');
const unique = (p: string) => `${p}-${randomBytes(4).toString('hex')}`;
const rx = new WebhookReceiver();

let token: string;
let I: string;
let ws: LiveClient | undefined;
let mq: MqttClient | undefined;

const { call, ok } = e2eCalls(url, () => token);

let reader: any;
let person: any;
const cardNumber = 4_200_000 + Math.floor(Math.random() * 1_000_000);

beforeAll(async () => {
  await rx.start();
  token = await adminToken(url, admin);
  I = admin.instanceKey;
  const schedule = await ok('POST', `/api/f/${I}/schedules`, { $type: 'ScheduleInfo', CommonName: unique('Always'), IsAlways: true });
  reader = await ok('POST', `/api/f/${I}/readers`, { $type: 'VendorReaderInfo', CommonName: unique('Front reader') });
  const level = await ok('POST', `/api/f/${I}/accesslevels`, { $type: 'AccessLevelInfo', CommonName: unique('Staff'), AccessLevelEntries: [{ ReaderId: reader.Key, ScheduleId: schedule.Key }] });
  person = await ok('POST', `/api/f/${I}/people`, { $type: 'PersonInfo', CommonName: unique('Jane Doe'), CardAssignments: [{ EncodedCardNumber: cardNumber, DisplayCardNumber: 'J-1', PinCode: '1357' }] });
  await ok('POST', `/api/f/${I}/people/${person.Key}/connections/AccessLevel?relatedKey=${level.Key}`, undefined, 200);
}, 60_000);

afterAll(async () => {
  await ws?.close();
  await mq?.endAsync(true).catch(() => {});
  await rx.stop();
});

describe('the card read command', () => {
  it('publishes Access Granted to the WebSocket, MQTT and a webhook within 2 s, with its BSON data', async () => {
    const topic = `/${I}/${reader.Key}`;
    ws = await openLiveClient(wsUrl, { token });
    ws.send({ action: 'subscribe', topic });
    for (let m = await ws.next(10_000); m?.type !== 'subscribed'; m = await ws.next(10_000));
    mq = await mqtt.connectAsync(mqttUrl, { protocolVersion: 4, clean: true, clientId: unique('access'), reconnectPeriod: 0, username: token });
    const overMqtt: any[] = [];
    mq.on('message', (_t, payload) => overMqtt.push(deserialize(payload)));
    await mq.subscribeAsync(topic);
    const path = `/${unique('door')}`;
    const hook = await ok('POST', `/api/f/${I}/webhooks`, { CommonName: path.slice(1), Url: rx.endpoint(path), Topics: [topic] });
    rx.secrets(path, hook.Secret);

    const started = Date.now();
    const command = await ok('POST', `/api/f/${I}/eventmessagesink`, {
      $type: 'EventMessagePosting',
      OccurredOn: new Date().toISOString(),
      AppKey: 'MercuryCommands',
      EventTypeMoniker: { Namespace: 'MercuryServiceCommands', Nickname: 'mercury:command-simulateCardRead' },
      RelatedObjects: [
        { Relation: 'Reader', LinkedObjectKey: reader.Key, Href: reader.Href },
        { Relation: 'CardFormat', LinkedObjectKey: '000000000000000000000fff' },
      ],
      EventDataBsonBase64: Buffer.from(serialize({ EncodedCardNumber: cardNumber, PinCode: '1357', Reason: 'e2e' })).toString('base64'),
    });

    const isGranted = (e: any) => e?.MessageShort === 'Access Granted' && e?.ObjectLinks?.some((l: any) => l.Relation === 'Command' && l.LinkedObjectKey === command.Key);
    let live: any;
    while (!live) {
      const m = await ws.next(2_000);
      if (m?.type === 'event' && isGranted(m.event)) live = m.event;
    }
    expect(await waitFor(() => overMqtt.some(isGranted), 2_000)).toBe(true);
    expect(await waitFor(() => rx.received(path).some((d) => isGranted(d.payload.data)), 2_000)).toBe(true);
    expect(Date.now() - started).toBeLessThan(2_000 + 500);

    expect(live).toMatchObject({ AppKey: '000000000000000000000021', EventTypeMoniker: { Namespace: 'MercuryService', Nickname: 'access-granted' }, InFolderKey: I });
    const data = deserialize(Buffer.from(live.EventDataBsonBase64, 'base64'), { useBigInt64: true });
    expect(data).toMatchObject({
      Granted: true,
      Reason: 'Granted',
      Reader: { Key: reader.Key, CommonName: reader.CommonName },
      Person: { Key: person.Key, CommonName: person.CommonName },
      EncodedCardNumber: BigInt(cardNumber),
      DisplayedCardNumber: 'J-1',
    });
    expect(data.MessageTimeUTC).toBeInstanceOf(Date);
    const viaMqtt = overMqtt.find(isGranted);
    expect(viaMqtt.Key).toBe(live.Key);
    // The PIN is in no event: neither the command's nor the result's.
    const events = [live, viaMqtt, command, rx.received(path).find((d) => isGranted(d.payload.data))!.payload.data];
    for (const e of events) expect(JSON.stringify(e)).not.toContain('1357');
    expect(Buffer.from(command.EventDataBsonBase64, 'base64').toString('latin1')).not.toContain('1357');
  });
});

describe('POST accessdecisions over HTTP', () => {
  it('answers the decision and its checks without recording', async () => {
    const r = await call('POST', `/api/f/${I}/accessdecisions`, { ReaderKey: reader.Key, EncodedCardNumber: String(cardNumber), PinCode: '0000' });
    expect(r.status, r.text).toBe(200);
    expect(r.body).toMatchObject({ Granted: true, Reason: 'Granted', Person: { Key: person.Key }, TimeZone: 'UTC', StrikeSeconds: 5 });
    expect(r.text).not.toContain('1357');
    const bad = await call('POST', `/api/f/${I}/accessdecisions`, { ReaderKey: reader.Key, EncodedCardNumber: 1.5 });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ Error: 'ValidationFailed' });
  });
});
