/**
 * webhooks: one subscription of the bench instance (filtered to the bench's event type) posting
 * to a loopback receiver that verifies every delivery with the `standardwebhooks` package; events
 * published by parallel HTTP clients; publish-to-delivered latency (from the start of the
 * publishing request to the verified delivery's arrival), events lost and duplicates. The path is
 * the local runtime's: stream → fan-out → the table's job queue → the timer → the sender.
 */
import { WebhookReceiver } from '../test/support/webhook-receiver.ts';
import { posting } from './measure-capacity.ts';
import type { BenchRuntime } from './measure-runtime.ts';
import type { Measured, Webhooks } from './results.ts';
import { summarize } from './stats.ts';

const WEBHOOKS_P50_GOAL_MS = 1000;
const GOAL = `lost = 0 and p50 <= ${WEBHOOKS_P50_GOAL_MS} ms (from the start of the publishing request to the verified delivery)`;

export interface WebhooksInput {
  readonly rt: BenchRuntime;
  readonly events: number;
  readonly clients: number;
  readonly settleMs: number;
  readonly publishDeadline: number;
  readonly measured: () => Measured;
}

function notMeasured(input: WebhooksInput, reason: string): Webhooks {
  return {
    events: input.events,
    published: 0,
    delivered: 0,
    lost: null,
    duplicates: null,
    invalid: null,
    clients: input.clients,
    latencyMs: null,
    attemptMs: null,
    floor: null,
    ratio: null,
    goal: GOAL,
    meetsGoal: false,
    note: `could not be measured: ${reason}`,
    measured: input.measured(),
  };
}

export async function measureWebhooks(input: WebhooksInput): Promise<Webhooks> {
  const { rt } = input;
  const e = rt.events.setup;
  if (!e) return notMeasured(input, rt.events.reason ?? 'no event type');
  const rx = await new WebhookReceiver().start();
  const url = rx.endpoint('/bench');
  const receivedAt = new Map<string, number>();
  let duplicates = 0;
  let allIn: (() => void) | undefined;
  let publishing = true;
  const sentAt = new Map<string, number>();
  rx.onDelivery = (_path, d) => {
    const key = String(d.payload.data?.Key);
    if (receivedAt.has(key)) duplicates++;
    else receivedAt.set(key, performance.now());
    if (allIn && !publishing && [...sentAt.keys()].every((k) => receivedAt.has(k))) allIn();
  };
  let hookHref: string | undefined;
  try {
    const hook = await rt.call('POST', `/api/f/${rt.instanceKey}/webhooks`, {
      CommonName: 'bench',
      Url: url,
      EventTypeKeys: [e.eventTypeKey],
      IncludeAuditEvents: false,
    });
    if (hook.status !== 201) return notMeasured(input, `creating the subscription answered ${hook.status}: ${hook.text.slice(0, 200)}`);
    hookHref = String(hook.body.Href);
    rx.secrets('/bench', String(hook.body.Secret));

    const failures: string[] = [];
    let next = 0;
    const client = async () => {
      while (next < input.events && Date.now() < input.publishDeadline) {
        const i = next++;
        const occurred = new Date(Date.UTC(2026, 1, 1) + i * 1000).toISOString();
        const t0 = performance.now();
        const r = await rt.call('POST', `/api/f/${rt.instanceKey}/eventmessagesink`, posting(e, rt.related, occurred));
        if (r.status !== 201) {
          failures.push(String(r.status));
          continue;
        }
        sentAt.set(String(r.body.Key), t0);
      }
    };
    const done = new Promise<void>((r) => (allIn = r));
    await Promise.all(Array.from({ length: input.clients }, client));
    publishing = false;
    if ([...sentAt.keys()].every((k) => receivedAt.has(k))) allIn!();
    await Promise.race([done, new Promise((r) => setTimeout(r, input.settleMs))]);
    await new Promise((r) => setTimeout(r, 300));

    const latencies = [...sentAt].flatMap(([k, t0]) => (receivedAt.has(k) ? [receivedAt.get(k)! - t0] : []));
    const lost = sentAt.size - latencies.length;
    const attempts = await rt.call('GET', `${hookHref}/deliveries?pageSize=1000`);
    const attemptMs = attempts.status === 200 ? (attempts.body as Array<{ DurationMs: number }>).map((a) => a.DurationMs) : [];
    const lat = latencies.length ? summarize(latencies) : null;
    const notes: string[] = [];
    if (failures.length) notes.push(`${failures.length} publishes failed (HTTP ${[...new Set(failures)].join(', ')})`);
    if (sentAt.size + failures.length < input.events) notes.push(`only ${sentAt.size + failures.length} of ${input.events} events were published within the phase's time limit`);
    if (lost) notes.push(`${lost} events were not delivered within ${input.settleMs} ms of the last publish`);
    const invalid = rx.invalid('/bench').length;
    if (invalid) notes.push(`${invalid} deliveries did not verify`);
    return {
      events: input.events,
      published: sentAt.size,
      delivered: latencies.length,
      lost,
      duplicates,
      invalid,
      clients: input.clients,
      latencyMs: lat,
      attemptMs: attemptMs.length ? summarize(attemptMs) : null,
      floor: null,
      ratio: null,
      goal: GOAL,
      meetsGoal: failures.length === 0 && sentAt.size === input.events && lost === 0 && invalid === 0 && lat !== null && lat.p50 <= WEBHOOKS_P50_GOAL_MS,
      ...(notes.length ? { note: notes.join('; ') } : {}),
      measured: input.measured(),
    };
  } finally {
    // The http phase publishes the same event type: it must not feed this subscription.
    if (hookHref) await rt.call('DELETE', hookHref).catch(() => undefined);
    await rx.stop();
  }
}
