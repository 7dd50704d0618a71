/**
 * Clean stops of the local runtime (issue #38, "Nothing lost"): `npm start` runs in a process group
 * of its own, as a terminal runs a foreground command, and a Ctrl+C there signals the whole group
 * (npm, its shell, node). Under a load of person writes and event publishes, with a webhook
 * subscription and usage counts held in memory until the stop (GATEHOUSE_USAGE_FLUSH_SECONDS is an
 * hour), SIGINT to the group must lose nothing: after a restart on the same data every write that
 * was answered 2xx is there, every event that was answered 2xx reaches the webhook, and the usage
 * report counts every request that was answered. A second signal, later, exits at once.
 */
import { request } from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { serialize } from 'bson';
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

const admin = newRuntimeAdmin('CleanStop');
const env = {
  GATEHOUSE_INSTANCE: admin.instanceName,
  GATEHOUSE_ADMIN_USER: admin.userName,
  GATEHOUSE_ADMIN_PASSWORD: admin.password,
  GATEHOUSE_CLIENT_SECRET: admin.clientSecret,
  // Counts are written at the stop only: the report after the restart shows what the stop wrote.
  GATEHOUSE_USAGE_FLUSH_SECONDS: '3600',
};

const today = () => new Date().toISOString().slice(0, 10);
const sum = (days: Array<Record<string, any>>, count: (d: Record<string, any>) => number | undefined) => days.reduce((n, d) => n + (count(d) ?? 0), 0);

/** Lines of the runtime's log that say something was lost or failed while stopping. */
const LOSS = /ECONNREFUSED|retried at the next flush|writing the last counts failed|request failed|fan-out batch given up|reading the stream failed|DynamoDB Local exited unexpectedly|not fully read/;

describe('stopping the local runtime with a signal to its process group', () => {
  it('loses no acknowledged write, event or usage count when Ctrl+C reaches the whole group mid-load', async () => {
    const dataDir = await newDataDir();
    const since = today();
    const first = await spawnRuntime({ dataDir, env, npmStart: true });
    running.push(first);
    const base = `${first.url}/api/f/${first.instanceKey}`;
    const token = await adminToken(first.url, admin);

    const rx = await new WebhookReceiver().start();
    receivers.push(rx);
    const hook = await must(`${base}/webhooks`, token, 'POST', { Url: rx.endpoint('/stop'), IncludeAuditEvents: false }, 201);
    rx.secrets('/stop', hook.Secret);
    const nickname = `Stop${Date.now().toString(36)}`;
    const app = await must(`${base}/apps`, token, 'POST', { $type: `${NS}.AppInfo, ${NS}`, CommonName: nickname, Monikers: [{ Namespace: 'Stop', Nickname: nickname }] }, 201);
    await must(`${first.url}${app.Href}/eventtypes`, token, 'PUT', { $type: `${NS}.EventTypeInfo, ${NS}`, CommonName: 'Stop', Monikers: [{ Namespace: 'Stop', Nickname: 'Stop' }], Priority: 1 }, 201);

    // Six clients write people and six publish events until the runtime stops answering them.
    const people: string[] = [];
    const events: string[] = [];
    const statuses = { people: new Map<number, number>(), events: new Map<number, number>() };
    let unanswered = 0;
    const note = (m: Map<number, number>, s: number) => m.set(s, (m.get(s) ?? 0) + 1);
    const worker = async (kind: 'people' | 'events', c: number): Promise<void> => {
      for (let i = 0; ; i++) {
        const res =
          kind === 'people'
            ? await send(`${base}/people`, token, 'POST', { $type: 'PersonInfo', GivenName: `Stop${c}`, Surname: `N${i}` })
            : await send(`${base}/eventmessagesink`, token, 'POST', {
                $type: `${NS}.EventMessagePosting, ${NS}`,
                OccurredOn: new Date().toISOString(),
                AppKey: nickname,
                EventTypeMoniker: { Namespace: 'Stop', Nickname: 'Stop' },
                RelatedObjects: [],
                EventDataBsonBase64: Buffer.from(serialize({ C: c, N: i })).toString('base64'),
              });
        if (!res) return void unanswered++;
        note(statuses[kind], res.status);
        if (res.status === 201) (kind === 'people' ? people : events).push(kind === 'people' ? res.body.Href : res.body.Key);
        // 503: the runtime stopped taking requests.
        if (res.status === 503) return;
      }
    };
    const load = Promise.all([...Array.from({ length: 6 }, (_, c) => worker('people', c)), ...Array.from({ length: 6 }, (_, c) => worker('events', c))]);
    expect(await waitFor(() => people.length + events.length >= 150, 60_000, 20)).toBe(true);

    const signalledAt = Date.now();
    first.signalGroup('SIGINT');
    await load;
    await first.exited;
    // npm's shell, signalled with the group, ends by the signal once node is done: npm then does too.
    const code = first.child.exitCode ?? first.child.signalCode;
    const stopMs = Date.now() - signalledAt;
    const javaGone = first.javaPid !== null && (await waitUntilGone(first.javaPid, 5000));
    const log = first.output();
    // Requests the handlers answered (the stop's 503s are the runtime's, counted for no one).
    const handled = (m: Map<number, number>) => [...m].reduce((n, [s, k]) => n + (s === 503 ? 0 : k), 0);
    const answered = { people: handled(statuses.people), events: handled(statuses.events) };

    const second = await spawnRuntime({ dataDir, env });
    running.push(second);
    const base2 = `${second.url}/api/f/${second.instanceKey}`;
    const token2 = await adminToken(second.url, admin);
    let found = 0;
    for (let i = 0; i < people.length; i += 10) {
      const got = await Promise.all(people.slice(i, i + 10).map((href) => send(`${second.url}${href}`, token2, 'GET')));
      found += got.filter((r) => r?.status === 200).length;
    }
    const expectedIds = new Set(events.map((k) => `msg_${k}_${hook.Key}`));
    const deliveredAll = await waitFor(() => [...expectedIds].every((id) => rx.ids('/stop').has(id)), 60_000, 200);
    const delivered = [...expectedIds].filter((id) => rx.ids('/stop').has(id)).length;
    const usage = await send(`${base2}/usage?from=${since}`, token2, 'GET');
    const days = (usage?.body?.Days ?? []) as Array<Record<string, any>>;
    const counted = { people: sum(days, (d) => d.Requests?.people), events: sum(days, (d) => d.Requests?.events), published: sum(days, (d) => d.EventsPublished) };

    const figures = {
      stop: { exitCode: code, ms: stopMs, javaGone },
      writes: { acknowledged: people.length, found },
      events: { acknowledged: events.length, delivered },
      requests: { people: Object.fromEntries(statuses.people), events: Object.fromEntries(statuses.events), unanswered },
      countsFlushed: { peopleRequests: `${counted.people} of ${answered.people}`, eventRequests: `${counted.events} of ${answered.events}`, eventsPublished: `${counted.published} of ${events.length}` },
      lossLines: log.split('\n').filter((l) => LOSS.test(l)).length,
    };
    console.log(`clean stop under load: ${JSON.stringify(figures, null, 2)}`);

    expect([0, 'SIGINT']).toContain(code);
    expect(log).toMatch(/^Gatehouse stopped\.$/m);
    expect(isAlive(first.pid)).toBe(false);
    expect(javaGone).toBe(true);
    expect(log.split('\n').filter((l) => LOSS.test(l))).toEqual([]);
    // Every answer was a success or the stop's 503: no request in flight failed.
    expect([...statuses.people.keys(), ...statuses.events.keys()].every((s) => s === 201 || s === 503)).toBe(true);
    expect(found).toBe(people.length);
    expect(deliveredAll).toBe(true);
    expect(usage?.status).toBe(200);
    expect(counted.people).toBe(answered.people);
    expect(counted.events).toBe(answered.events);
    expect(counted.published).toBe(events.length);
    expect(await second.stop()).toBe(0);
  });

  it('exits at once on a second signal while the first stop waits for a request in flight', async () => {
    const rt = await spawnRuntime({ env, npmStart: true });
    running.push(rt);
    // A request whose body never completes: the stop waits for it.
    const slow = request(`${rt.url}/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': '1000' } });
    slow.on('error', () => undefined);
    slow.write('grant_type=password');
    await new Promise((r) => setTimeout(r, 300));

    rt.signalGroup('SIGINT');
    await new Promise((r) => setTimeout(r, 2500));
    const stillStopping = isAlive(rt.pid);
    const againAt = Date.now();
    if (stillStopping) rt.signalGroup('SIGINT');
    await rt.exited;
    const code = rt.child.exitCode ?? rt.child.signalCode;
    const exitMs = Date.now() - againAt;
    const javaGone = rt.javaPid !== null && (await waitUntilGone(rt.javaPid, 5000));
    slow.destroy();
    console.log(`second signal: ${JSON.stringify({ stillStoppingAfterFirst: stillStopping, exitCode: code, msToExit: exitMs, javaGone })}`);

    expect(stillStopping).toBe(true);
    expect(code).not.toBe(0);
    expect(exitMs).toBeLessThan(2000);
    expect(javaGone).toBe(true);
    expect(rt.output()).toMatch(/SIGINT again: exiting now/);
  });
});
