/**
 * Standard Webhooks signing: secrets are `whsec_` + base64 of 32 random bytes; a delivery carries
 * `webhook-id`, `webhook-timestamp` (seconds) and `webhook-signature`, `v1,` + base64 of the
 * HMAC-SHA256 of `<id>.<timestamp>.<body>` keyed with the secret's bytes (several signatures are
 * separated by spaces, so a receiver can switch secrets without loss).
 */
import { createHmac, randomBytes } from 'node:crypto';

const PREFIX = 'whsec_';

/** A new signing secret. */
export function newSecret(): string {
  return `${PREFIX}${randomBytes(32).toString('base64')}`;
}

/** The `v1,<base64>` signature of one delivery with one secret. */
export function sign(secret: string, id: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64')}`;
}

/** The three Standard Webhooks headers of a delivery, signed with every secret given. */
export function signedHeaders(secrets: readonly string[], id: string, timestampSeconds: number, body: string): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': secrets.map((s) => sign(s, id, timestampSeconds, body)).join(' '),
  };
}

/** The `webhook-id` of an event for a subscription: the same on every retry, redelivery and replay. */
export const messageIdOf = (eventKey: string, webhookKey: string): string => `msg_${eventKey}_${webhookKey}`;
