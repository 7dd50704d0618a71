/**
 * The sender: makes one delivery attempt of a job, records it, and schedules what follows. The
 * same code runs in AWS (the webhooks function consuming the SQS queue) and on the local runtime
 * (its runner reading the local queue table).
 *
 * - Success is any 2xx within 10 s; redirects are not followed (a 3xx is a failure).
 * - A failure puts the next attempt back on the queue (see `schedule.ts`); after the last one the
 *   attempt record is marked dead-lettered and kept for redelivery and replay.
 * - A `410 Gone` disables the subscription at once; five days of failures without a success
 *   disable it too. A disabled or deleted subscription's pending jobs are recorded dead-lettered
 *   (disabled) or dropped (deleted).
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import { Agent as HttpAgent, request as httpRequest, type ClientRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import type { Config } from '../../config.ts';
import type { Db } from '../../db/client.ts';
import {
  disableWebhook,
  getRecentWebhook,
  putAttempt,
  recordWebhookOutcome,
  type DeliveryAttempt,
  type StoredWebhook,
} from '../../db/webhooks-repo.ts';
import { newKey } from '../../model/placement.ts';
import type { DeliveryJob, WebhookQueue } from './queue.ts';
import { FAILING_DISABLE_MS, MAX_ATTEMPTS, retryDelayMs } from './schedule.ts';
import { CONNECTION_LOST, COULD_NOT_CONNECT, INVALID_URL, NOT_HTTPS, SUBSCRIPTION_DISABLED, TIMED_OUT, TLS_FAILED } from './reasons.ts';
import { signedHeaders } from './signing.ts';
import { TargetRefused, checkedLookup, refusal } from './ssrf.ts';

/** How long a receiver has to answer. */
export const DELIVERY_TIMEOUT_MS = 10_000;
/** Days an attempt record is kept. */
export const ATTEMPT_RETENTION_DAYS = 30;
/** How stale LastDeliveryOn may be (it is not rewritten on every delivery). */
export const LAST_DELIVERY_RESOLUTION_MS = 60_000;
/**
 * Connections to receivers are kept open between deliveries (per execution environment), as
 * browsers and other webhook senders do: a busy subscription pays one TCP (and TLS) handshake, not
 * one per delivery. The address a name resolves to is checked when a connection is made (see
 * `checkedLookup`); a kept connection stays with the address it was checked for. An idle one is
 * closed after {@link IDLE_CONNECTION_MS}, or a second before the receiver's own `Keep-Alive:
 * timeout=` hint when that is shorter (Node's agent reads it), so it is not reused as the
 * receiver closes it.
 */
export const IDLE_CONNECTION_MS = 4000;
const agentOptions = { keepAlive: true, timeout: IDLE_CONNECTION_MS, scheduling: 'lifo' as const };
/** The agents by address policy: a connection checked under one policy is never reused under the other. */
const agents = new Map<boolean, { readonly http: HttpAgent; readonly https: HttpsAgent }>();
const agentsFor = (allowLoopback: boolean) => {
  let a = agents.get(allowLoopback);
  if (!a) agents.set(allowLoopback, (a = { http: new HttpAgent(agentOptions), https: new HttpsAgent(agentOptions) }));
  return a;
};

/** Most response bytes read (and thrown away). */
const MAX_RESPONSE_BYTES = 64 * 1024;

export const DISABLED_GONE = 'Gone: the receiver answered 410.';
export const DISABLED_FAILING = 'Failing: no delivery succeeded for five days.';

export interface SenderDeps {
  readonly db: Db;
  readonly logger: Logger;
  readonly config: Config;
  readonly now: () => Date;
  readonly queue: WebhookQueue;
}

export interface PostOutcome {
  readonly statusCode: number | null;
  /** What the tenant is told: one of the fixed reasons of reasons.ts, or null. */
  readonly error: string | null;
  /** The cause behind `error` (errno, name, address): for the server log only, never stored. */
  readonly detail: string | null;
  readonly durationMs: number;
}

/** Error codes of a TLS handshake that failed (certificate or protocol). */
const TLS_CODE = /^(ERR_TLS_|ERR_SSL_)|CERT|^EPROTO$/;

/** The fixed reason of a request error before any answer (see reasons.ts). */
function reasonOf(err: NodeJS.ErrnoException, timedOut: boolean): string {
  if (timedOut) return TIMED_OUT;
  if (err instanceof TargetRefused) return COULD_NOT_CONNECT;
  const code = err.code ?? '';
  if (TLS_CODE.test(code)) return TLS_FAILED;
  if (code === 'ECONNRESET' || code === 'EPIPE') return CONNECTION_LOST;
  return COULD_NOT_CONNECT;
}

/**
 * Posts a body to a URL: the host checked when it is resolved, no redirects, a 10 s limit for the
 * whole exchange. Never throws: a refused target, a network error or a timeout is an `error` (a
 * fixed reason) with its `detail`.
 */
export function postOnce(
  url: string,
  headers: Readonly<Record<string, string>>,
  body: string,
  opts: { readonly allowLoopback: boolean; readonly timeoutMs?: number },
): Promise<PostOutcome> {
  const started = performance.now();
  const done = (statusCode: number | null, error: string | null, detail: string | null = null): PostOutcome => ({
    statusCode,
    error,
    detail,
    durationMs: Math.round(performance.now() - started),
  });
  return new Promise((resolve) => {
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      return resolve(done(null, INVALID_URL));
    }
    const host = target.hostname.startsWith('[') ? target.hostname.slice(1, -1) : target.hostname;
    // A literal address is connected to without a lookup: check it here.
    if (isIP(host)) {
      const why = refusal(host, opts.allowLoopback);
      if (why) return resolve(done(null, COULD_NOT_CONNECT, `Refused: ${why}.`));
    }
    const send = target.protocol === 'https:' ? httpsRequest : target.protocol === 'http:' ? httpRequest : undefined;
    if (!send) return resolve(done(null, NOT_HTTPS));
    const timeoutMs = opts.timeoutMs ?? DELIVERY_TIMEOUT_MS;
    let settled = false;
    let timedOut = false;
    let req: ClientRequest;
    const finish = (o: PostOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(o);
    };
    /**
     * Sends the request. A kept connection the receiver closed while it was idle (or while the
     * Lambda environment was frozen, when no timer runs) fails at once with ECONNRESET or EPIPE
     * before any answer: that request is sent again, once, on a new connection.
     */
    const attempt = (mayRetry: boolean): void => {
      let answered = false;
      req = send(
        target,
        {
          method: 'POST',
          headers: { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), 'user-agent': 'Gatehouse-Webhooks/1' },
          lookup: checkedLookup(opts.allowLoopback),
          agent: target.protocol === 'https:' ? agentsFor(opts.allowLoopback).https : agentsFor(opts.allowLoopback).http,
        },
        (res) => {
          answered = true;
          let read = 0;
          res.on('data', (chunk: Buffer) => {
            read += chunk.length;
            if (read > MAX_RESPONSE_BYTES) res.destroy();
          });
          const end = () => finish(done(res.statusCode ?? null, null));
          res.on('end', end);
          res.on('close', end);
          res.on('error', end);
        },
      );
      const sent = req;
      sent.on('error', (err) => {
        const e = err as NodeJS.ErrnoException;
        if (mayRetry && !answered && !settled && sent.reusedSocket && (e.code === 'ECONNRESET' || e.code === 'EPIPE')) return attempt(false);
        const detail = err instanceof TargetRefused ? err.message : e.code ? `${e.code}: ${e.message}` : e.message;
        finish(done(null, reasonOf(e, timedOut), detail));
      });
      sent.end(body);
    };
    const timer = setTimeout(() => {
      timedOut = true;
      req.destroy(new Error(`No answer within ${Math.round(timeoutMs / 1000)} s.`));
    }, timeoutMs);
    attempt(true);
  });
}

/** Whether an outcome is a success: a 2xx. */
export const succeeded = (o: PostOutcome): boolean => o.statusCode !== null && o.statusCode >= 200 && o.statusCode < 300;

/** The secrets a delivery is signed with: the current one, and the previous one during its 24 hours. */
export function signingSecrets(hook: StoredWebhook, nowMs: number): string[] {
  return hook.previousSecret && (hook.previousSecretUntil ?? 0) > nowMs ? [hook.secret, hook.previousSecret] : [hook.secret];
}

/** The body and headers of a delivery, signed now. */
export function signedDelivery(hook: StoredWebhook, job: Pick<DeliveryJob, 'messageId' | 'type' | 'timestamp' | 'data'>, now: Date) {
  const body = JSON.stringify({ type: job.type, timestamp: job.timestamp, data: job.data });
  const headers = signedHeaders(signingSecrets(hook, now.getTime()), job.messageId, Math.floor(now.getTime() / 1000), body);
  return { body, headers };
}

const epoch = (d: Date) => Math.floor(d.getTime() / 1000);

/** Logs the cause of an attempt that got no answer: the operator's view of what the tenant sees as a fixed reason. */
function logFailure(deps: Pick<SenderDeps, 'logger'>, hook: StoredWebhook, o: PostOutcome): void {
  if (o.detail) deps.logger.info('webhook attempt failed', { webhook: hook.key, instance: hook.instanceKey, reason: o.error, detail: o.detail });
}

/** Makes a test delivery now (filters do not apply) and records it. */
export async function sendTest(deps: SenderDeps, hook: StoredWebhook): Promise<PostOutcome> {
  const now = deps.now();
  const messageId = `msg_test_${newKey()}`;
  const { body, headers } = signedDelivery(
    hook,
    {
      messageId,
      type: 'webhook.test',
      timestamp: now.toISOString(),
      data: { WebhookKey: hook.key, Message: 'A test delivery from Gatehouse.' },
    },
    now,
  );
  const outcome = await postOnce(hook.settings.Url, headers, body, { allowLoopback: deps.config.webhookAllowLoopback });
  logFailure(deps, hook, outcome);
  await putAttempt(
    deps.db,
    {
      key: newKey(),
      webhookKey: hook.key,
      eventKey: null,
      messageId,
      attempt: 1,
      statusCode: outcome.statusCode,
      error: outcome.error,
      durationMs: outcome.durationMs,
      attemptedOn: now.toISOString(),
      nextAttemptOn: null,
      deadLettered: false,
    },
    epoch(now) + ATTEMPT_RETENTION_DAYS * 86_400,
  );
  return outcome;
}

/** What became of a job. */
export type JobResult =
  | { readonly kind: 'delivered' | 'retrying' | 'dead-lettered' | 'dropped' }
  /** Not due yet: hide it this many ms more (SQS only; the local queue reads only due jobs). */
  | { readonly kind: 'early'; readonly waitMs: number };

/**
 * Handles one job: one attempt, its record, the subscription's outcome fields, and the next
 * attempt queued when this one failed. Throws only when the store or the queue fails (the job
 * then comes back from its queue and is tried again: at least once).
 */
export async function handleJob(deps: SenderDeps, job: DeliveryJob): Promise<JobResult> {
  const now = deps.now();
  if (job.notBefore - now.getTime() > 1000) return { kind: 'early', waitMs: job.notBefore - now.getTime() };
  const hook = await getRecentWebhook(deps.db, job.instanceKey, job.webhookKey, Date.now(), job.webhookVersion);
  if (!hook) return { kind: 'dropped' };
  const ttl = epoch(now) + ATTEMPT_RETENTION_DAYS * 86_400;
  const record = (o: PostOutcome, nextAttemptOn: string | null, deadLettered: boolean): DeliveryAttempt => ({
    key: newKey(),
    webhookKey: hook.key,
    eventKey: job.eventKey,
    messageId: job.messageId,
    attempt: job.attempt,
    statusCode: o.statusCode,
    error: o.error,
    durationMs: o.durationMs,
    attemptedOn: now.toISOString(),
    nextAttemptOn,
    deadLettered,
  });

  if (!hook.settings.Enabled) {
    // Kept for replay and redelivery once the subscription is enabled again.
    await putAttempt(deps.db, record({ statusCode: null, error: SUBSCRIPTION_DISABLED, detail: null, durationMs: 0 }, null, true), ttl);
    return { kind: 'dead-lettered' };
  }

  const { body, headers } = signedDelivery(hook, job, now);
  const outcome = await postOnce(hook.settings.Url, headers, body, { allowLoopback: deps.config.webhookAllowLoopback });
  logFailure(deps, hook, outcome);
  const at = deps.now();

  if (succeeded(outcome)) {
    await putAttempt(deps.db, record(outcome, null, false), ttl);
    // LastDeliveryOn is kept to the minute: a busy subscription's item is not written per delivery.
    const fresh = !hook.failingSince && hook.lastDeliveryOn !== null && at.getTime() - Date.parse(hook.lastDeliveryOn) < LAST_DELIVERY_RESOLUTION_MS;
    if (!fresh) await recordWebhookOutcome(deps.db, hook, { kind: 'delivered', at: at.toISOString() });
    return { kind: 'delivered' };
  }

  const updated = await recordWebhookOutcome(deps.db, hook, { kind: 'failed', at: at.toISOString() });
  const failingFor = updated?.failingSince ? at.getTime() - Date.parse(updated.failingSince) : 0;
  const disable =
    outcome.statusCode === 410
      ? DISABLED_GONE
      : failingFor >= FAILING_DISABLE_MS * deps.config.webhookRetryScale
        ? DISABLED_FAILING
        : undefined;
  if (disable && updated) {
    await disableWebhook(deps.db, updated, disable);
    deps.logger.warn('webhook disabled', { webhook: hook.key, reason: disable });
  }
  const delay = disable ? undefined : retryDelayMs(job.attempt, deps.config.webhookRetryScale);
  if (delay === undefined || job.attempt >= MAX_ATTEMPTS) {
    await putAttempt(deps.db, record(outcome, null, true), ttl);
    return { kind: 'dead-lettered' };
  }
  const next = at.getTime() + delay;
  // Queue the next attempt before this job is acknowledged: a crash in between repeats an
  // attempt (receivers de-duplicate on webhook-id), it never loses one.
  await deps.queue.send([{ ...job, attempt: job.attempt + 1, notBefore: next }]);
  await putAttempt(deps.db, record(outcome, new Date(next).toISOString(), false), ttl);
  return { kind: 'retrying' };
}
