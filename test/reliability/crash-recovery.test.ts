/**
 * Crash recovery of the local runtime (issue #38, "Nothing lost"): a power cut, played as SIGKILL
 * to `npm start`'s whole process group and to DynamoDB Local's (Java runs in a group of its own),
 * in the middle of a load of person writes and event publishes with one webhook subscription to a
 * slow receiver. After a restart on the same data directory every write answered 2xx is there,
 * every event answered 2xx is in the events list and reaches the webhook (at least once: a
 * duplicate only under the same `webhook-id`), and the stream poller resumed from its checkpoint
 * instead of from the stream's end. And DynamoDB Local itself, killed right after it answered a
 * transactional write (every object create is one), has that write on disk when it starts again.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { serialize } from 'bson';
import { GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { startDynamo } from '../../local/dynamo.ts';
import { createDb } from '#shared/db/client.ts';
import { ensureTable } from '#local/storage/create-tables.ts';
import { adminToken, isAlive, newDataDir, newRuntimeAdmin, spawnRuntime, waitUntilGone, type SpawnedRuntime } from '../support/runtime.ts';
import { WebhookReceiver, waitFor } from '../support/webhook-receiver.ts';
import { must, send } from '../support/lossy-calls.ts';

const NS = 'Gatehouse.Model';
const running: SpawnedRuntime[] = [];
const receivers: WebhookReceiver[] = [];

afterAll(async () => {
  await Promise.all(running.map((r) => r.stop().catch(() => undefined)));
  await Promise.all(receivers.map((r) => r.stop()));
});

const admin = newRuntimeAdmin('Crash');
const env = {
  GATEHOUSE_INSTANCE: admin.instanceName,
  GATEHOUSE_ADMIN_USER: admin.userName,
  GATEHOUSE_ADMIN_PASSWORD: admin.password,
  GATEHOUSE_CLIENT_SECRET: admin.clientSecret,
};

/** The items of a round of {@link TransactWriteCommand}s that are not in the table. */
async function missing(db: ReturnType<typeof createDb>, tableName: string, round: number): Promise<string[]> {
  const gone: string[] = [];
  for (let i = 0; i < 5; i++) {
    const got = await db.doc.send(new GetCommand({ TableName: tableName, Key: { PK: `r${round}-${i}`, SK: 'x' }, ConsistentRead: true }));
    if (!got.Item) gone.push(`r${round}-${i}`);
  }
  return gone;
}

/** Where the stream poller of a runtime began reading, as its ready line says. */
const streamStartOf = (rt: SpawnedRuntime): string | undefined =>
  (JSON.parse(/^GATEHOUSE_READY (.+)$/m.exec(rt.output())![1]!) as { streamStart?: string }).streamStart;

describe('a crash of the local runtime (SIGKILL to it and to Java) mid-load', () => {
  it('keeps every acknowledged write and delivers every acknowledged event after a restart', async () => {
    const dataDir = await newDataDir();
    const first = await spawnRuntime({ dataDir, env, npmStart: true });
    running.push(first);
    expect(first.javaPid).not.toBeNull();
    const base = `${first.url}/api/f/${first.instanceKey}`;
    const token = await adminToken(first.url, admin);

    const rx = await new WebhookReceiver().start();
    receivers.push(rx);
    const hook = await must(`${base}/webhooks`, token, 'POST', { Url: rx.endpoint('/crash'), IncludeAuditEvents: false }, 201);
    rx.secrets('/crash', hook.Secret);
    // A slow receiver: deliveries are in flight (and jobs queued) when the power goes.
    rx.setDelay('/crash', 300);
    const nickname = `Crash${Date.now().toString(36)}`;
    const app = await must(`${base}/apps`, token, 'POST', { $type: `${NS}.AppInfo, ${NS}`, CommonName: nickname, Monikers: [{ Namespace: 'Crash', Nickname: nickname }] }, 201);
    await must(`${first.url}${app.Href}/eventtypes`, token, 'PUT', { $type: `${NS}.EventTypeInfo, ${NS}`, CommonName: 'Crash', Monikers: [{ Namespace: 'Crash', Nickname: 'Crash' }], Priority: 1 }, 201);

    // Four clients write people and four publish events until the runtime stops answering.
    const people: string[] = [];
    const events: string[] = [];
    let failed = 0;
    let unanswered = 0;
    const worker = async (kind: 'people' | 'events', c: number): Promise<void> => {
      for (let i = 0; ; i++) {
        const res =
          kind === 'people'
            ? await send(`${base}/people`, token, 'POST', { $type: 'PersonInfo', GivenName: `Crash${c}`, Surname: `N${i}` })
            : await send(`${base}/eventmessagesink`, token, 'POST', {
                $type: `${NS}.EventMessagePosting, ${NS}`,
                OccurredOn: new Date().toISOString(),
                AppKey: nickname,
                EventTypeMoniker: { Namespace: 'Crash', Nickname: 'Crash' },
                RelatedObjects: [],
                EventDataBsonBase64: Buffer.from(serialize({ C: c, N: i })).toString('base64'),
              });
        if (!res) return void unanswered++;
        if (res.status === 201) (kind === 'people' ? people : events).push(kind === 'people' ? res.body.Href : res.body.Key);
        else failed++;
      }
    };
    const load = Promise.all([...Array.from({ length: 4 }, (_, c) => worker('people', c)), ...Array.from({ length: 4 }, (_, c) => worker('events', c))]);
    expect(await waitFor(() => people.length + events.length >= 100, 60_000, 5)).toBe(true);

    // The power cut: nothing runs its stop, Java included.
    first.signalGroup('SIGKILL');
    process.kill(first.javaPid!, 'SIGKILL');
    await load;
    await first.exited;
    const javaGone = await waitUntilGone(first.javaPid!, 5000);
    const deliveredBefore = rx.ids('/crash').size;

    const second = await spawnRuntime({ dataDir, env });
    running.push(second);
    const base2 = `${second.url}/api/f/${second.instanceKey}`;
    const token2 = await adminToken(second.url, admin);
    let found = 0;
    const missing: Array<{ href: string; status: number | undefined }> = [];
    for (let i = 0; i < people.length; i += 10) {
      const hrefs = people.slice(i, i + 10);
      const got = await Promise.all(hrefs.map((href) => send(`${second.url}${href}`, token2, 'GET')));
      got.forEach((r, j) => (r?.status === 200 ? found++ : missing.push({ href: hrefs[j]!, status: r?.status })));
    }
    const listed = new Set<string>();
    for (let page = 0; ; page++) {
      const got = await send(`${base2}/events?pageSize=1000&page=${page}`, token2, 'GET');
      expect(got?.status).toBe(200);
      for (const e of got!.body as Array<{ Key: string }>) listed.add(e.Key);
      if ((got!.body as unknown[]).length < 1000) break;
    }
    const inList = events.filter((k) => listed.has(k)).length;

    const expectedIds = new Set(events.map((k) => `msg_${k}_${hook.Key}`));
    const deliveredAll = await waitFor(() => [...expectedIds].every((id) => rx.ids('/crash').has(id)), 30_000, 200);
    const received = rx.received('/crash');
    const delivered = [...expectedIds].filter((id) => rx.ids('/crash').has(id)).length;
    // A duplicate is the same event to the same subscription again: same webhook-id, same event
    // (the body's `timestamp` is when its job was queued, again when the batch is fanned out again).
    const byId = new Map<string, string>();
    let duplicates = 0;
    let conflicting = 0;
    for (const d of received) {
      const body = JSON.stringify({ type: d.payload.type, data: d.payload.data });
      const seen = byId.get(d.id);
      if (seen !== undefined) {
        duplicates++;
        if (seen !== body) conflicting++;
      } else byId.set(d.id, body);
    }
    // A publish the crash cut off before its answer may have been written: delivered, as it is in
    // the events list. Nothing else may reach the receiver.
    const listedIds = new Set([...listed].map((k) => `msg_${k}_${hook.Key}`));
    const unanswered2xx = [...byId.keys()].filter((id) => !expectedIds.has(id) && listedIds.has(id)).length;
    const unexpected = [...byId.keys()].filter((id) => !expectedIds.has(id) && !listedIds.has(id)).length;
    const ready = { streamStart: streamStartOf(second) };

    const figures = {
      javaGone,
      writes: { acknowledged: people.length, found, missing },
      events: { acknowledged: events.length, inEventsList: inList, delivered, deliveredBeforeCrash: deliveredBefore },
      deliveries: { received: received.length, duplicates, conflicting, ofUnansweredPublishes: unanswered2xx, unexpected, invalid: rx.invalid('/crash').length },
      requests: { failed, unanswered },
      streamPollerStart: { first: streamStartOf(first), afterCrash: ready.streamStart ?? null },
    };
    console.log(`crash under load: ${JSON.stringify(figures, null, 2)}`);

    expect(isAlive(first.pid)).toBe(false);
    expect(javaGone).toBe(true);
    expect(failed).toBe(0);
    expect(found).toBe(people.length);
    expect(inList).toBe(events.length);
    expect(deliveredAll).toBe(true);
    expect(conflicting).toBe(0);
    expect(unexpected).toBe(0);
    expect(rx.invalid('/crash')).toEqual([]);
    expect(streamStartOf(first)).toBe('latest');
    expect(ready.streamStart).toBe('checkpoint');
    expect(await second.stop()).toBe(0);
  });

  it('has every transactional write DynamoDB Local answered on disk after Java is killed the moment after', async () => {
    const dataDir = await newDataDir();
    const tableName = 'crash-transactions';
    const lost: string[] = [];
    let written = 0;
    for (let round = 0; round < 3; round++) {
      const dynamo = await startDynamo({ dataDir });
      const db = createDb({ tableName, dynamodbEndpoint: dynamo.endpoint, region: 'local' }, { maxAttempts: 1 });
      try {
        if (round === 0) await ensureTable(db);
        if (round > 0) lost.push(...(await missing(db, tableName, round - 1)));
        for (let i = 0; i < 5; i++) {
          await db.doc.send(new TransactWriteCommand({ TransactItems: [{ Put: { TableName: tableName, Item: { PK: `r${round}-${i}`, SK: 'x' }, ConditionExpression: 'attribute_not_exists(PK)' } }] }));
          written++;
        }
      } finally {
        // The power cut, the moment the last write was answered.
        process.kill(dynamo.pid!, 'SIGKILL');
        db.raw.destroy();
        await dynamo.exited;
      }
    }
    const dynamo = await startDynamo({ dataDir });
    const db = createDb({ tableName, dynamodbEndpoint: dynamo.endpoint, region: 'local' });
    try {
      lost.push(...(await missing(db, tableName, 2)));
    } finally {
      db.raw.destroy();
      await dynamo.stop();
    }
    console.log(`transactions answered before SIGKILL of Java: ${JSON.stringify({ written, lost })}`);
    expect(lost).toEqual([]);
  });
});
