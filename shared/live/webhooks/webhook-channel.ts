/**
 * The webhooks channel of the fan-out: queues one delivery job per (event, subscription). The
 * subscriptions that may receive an event live under the instances of its chain; matching
 * (topics, scope, filters) is `webhookReceives`. The channel only queues: the sender
 * (`shared/live/webhooks/sender.ts`) delivers, so a slow or failing receiver never holds up the stream
 * batch, the other channels or another subscription.
 *
 * The rule (a subscription sees every event published after its answer): the subscriptions an
 * event is matched against are read, strongly consistent, after the event's stream record was
 * read, so after the event was written. A subscription whose `POST`, `PUT` or `DELETE` answered
 * before the event was published is a write completed before that read began: the read sees it.
 * Nothing is kept from one batch to the next: no cache answers for an event written after the
 * cache was read. A list read in another batch, on another shard or in another execution
 * environment can predate a subscription write that the event follows; only the stream orders
 * the two, and this read after the record is what uses that order. One Query per instance of
 * the batch's chains, per batch (docs/architecture.md, "webhook subscriptions of an event").
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import type { Db } from '../../db/client.ts';
import { webhooksOf, type StoredWebhook } from '../../db/webhooks-repo.ts';
import type { DeliveryJob, WebhookQueue } from './queue.ts';
import { messageIdOf } from './signing.ts';
import { matchable, webhookReceives } from './subscriptions.ts';
import type { ChannelEvent } from '../topics.ts';

/** Jobs per queue call (SQS sends them 10 per request). */
const CHUNK = 100;

export interface WebhookChannelDeps {
  readonly db: Db;
  readonly logger: Logger;
  readonly now: () => Date;
  readonly queue: WebhookQueue;
}

/** Queues the batch's deliveries. Returns the records (indexes) whose jobs could not all be queued. */
export async function queueWebhooks(deps: WebhookChannelDeps, events: readonly ChannelEvent[]): Promise<Set<number>> {
  const failed = new Set<number>();
  const instances = [...new Set(events.flatMap((e) => e.instances))];
  const hooks = new Map<string, StoredWebhook[] | Error>();
  // Read now, after the batch's records were: see the rule above.
  await Promise.all(
    instances.map(async (i) => {
      try {
        hooks.set(i, await webhooksOf(deps.db, i));
      } catch (err) {
        hooks.set(i, err as Error);
      }
    }),
  );

  const now = deps.now();
  const jobs: Array<{ record: number; job: DeliveryJob }> = [];
  for (const e of events) {
    const m = matchable(e.rendered, e.instances, e.linkedObjectKeys);
    for (const i of new Set(e.instances)) {
      const list = hooks.get(i);
      if (list instanceof Error) {
        deps.logger.error('fan-out: reading webhook subscriptions failed', { instance: i, error: list.message });
        failed.add(e.record);
        continue;
      }
      for (const h of list ?? []) {
        if (!webhookReceives(h, m)) continue;
        if (deps.queue.maxJobBytes !== undefined && !fits(e, deps.queue.maxJobBytes)) {
          // Retrying cannot make it fit: skipped with an error, as MQTT skips events above 128 KB.
          deps.logger.error('fan-out: event too large for a webhook job; not delivered', { event: e.key, webhook: h.key });
          continue;
        }
        jobs.push({
          record: e.record,
          job: {
            webhookKey: h.key,
            instanceKey: h.instanceKey,
            eventKey: e.key,
            messageId: messageIdOf(e.key, h.key),
            type: 'event',
            timestamp: now.toISOString(),
            data: e.rendered,
            webhookVersion: h.version,
            attempt: 1,
            notBefore: now.getTime(),
          },
        });
      }
    }
  }

  const chunks: Array<typeof jobs> = [];
  for (let i = 0; i < jobs.length; i += CHUNK) chunks.push(jobs.slice(i, i + CHUNK));
  await Promise.all(
    chunks.map(async (chunk) => {
      try {
        await deps.queue.send(chunk.map((j) => j.job));
      } catch (err) {
        // The stream retries these records; jobs queued twice are one webhook-id to the receiver.
        deps.logger.error('fan-out: queueing webhook deliveries failed', { jobs: chunk.length, error: (err as Error).message });
        for (const j of chunk) failed.add(j.record);
      }
    }),
  );
  return failed;
}

const sizes = new WeakMap<ChannelEvent, number>();
/** Whether an event's job (its rendered data and the job's own fields) fits in `max` bytes. */
function fits(e: ChannelEvent, max: number): boolean {
  let size = sizes.get(e);
  if (size === undefined) {
    size = Buffer.byteLength(JSON.stringify(e.rendered)) + 400;
    sizes.set(e, size);
  }
  return size <= max;
}

