/**
 * Outgoing messages (one-time codes). Locally each message is one JSON line appended to
 * `<dataDir>/outbox.jsonl` (the console says that one arrived, never the code); in AWS it is published to the SNS topic
 * the stack creates (`GATEHOUSE_NOTIFY_TOPIC_ARN`; see sns-notifier.ts).
 *
 * Subscribing in AWS: `aws sns subscribe --topic-arn <arn> --protocol email --notification-endpoint
 * ops@example.com` (or `--protocol sms --notification-endpoint +15551234567`). Every message carries
 * the message attributes `kind`, `instance`, `user` and, when the user has one, `email`, so a
 * subscription filter policy such as `{"user":["alice"],"instance":["Acme"]}` delivers one user's
 * codes to that user's address only.
 *
 * The code is the message's content: it is never written to the logs.
 */
import { appendFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Config } from '../config.ts';

interface OneTimePasswordMessage {
  readonly kind: 'one-time-password';
  /** Instance name. */
  readonly instance: string;
  /** User name. */
  readonly user: string;
  readonly code: string;
  /** ISO time the code was issued. */
  readonly at: string;
  /** The user's email address, when known (routing only; not in the local outbox line). */
  readonly email?: string;
}

export type OutgoingMessage = OneTimePasswordMessage;

export interface Notifier {
  send(message: OutgoingMessage): Promise<void>;
}

/** The outbox line of a message, fields in the documented order. */
function outboxLine(m: OutgoingMessage): string {
  return JSON.stringify({ kind: m.kind, instance: m.instance, user: m.user, code: m.code, at: m.at });
}

export interface OutboxOptions {
  /** Also say on stdout (the local runtime's console) that a message arrived, and where; never its code. */
  readonly print?: boolean;
}

/** Local delivery: `<dataDir>/outbox.jsonl`, one JSON line per message (appended atomically). */
export function outboxNotifier(dataDir: string, opts: OutboxOptions = {}): Notifier {
  const file = join(dataDir, 'outbox.jsonl');
  let ready: Promise<unknown> | undefined;
  return {
    async send(m) {
      await (ready ??= mkdir(dataDir, { recursive: true, mode: 0o700 }));
      const line = outboxLine(m);
      await appendFile(file, `${line}\n`, { mode: 0o600 });
      if (opts.print) process.stdout.write(`outbox: a ${m.kind} for ${m.instance}\\${m.user} is in ${file}\n`);
    },
  };
}

/**
 * The notifier of a function that sends nothing: the local outbox, or, when a topic is configured
 * (AWS), one that refuses to send. Only the token function sends codes; it passes the SNS notifier
 * (`shared/notify/sns-notifier.ts`), so no other function bundles the SNS client.
 */
export function outboxOnlyNotifierFor(cfg: Pick<Config, 'notifyTopicArn' | 'dataDir' | 'logLevel'>): Notifier {
  if (cfg.notifyTopicArn) {
    return {
      send: async () => {
        throw new Error('this function has no SNS notifier: pass notifierFor(config) from shared/notify/sns-notifier.ts');
      },
    };
  }
  return outboxNotifier(cfg.dataDir, { print: cfg.logLevel !== 'SILENT' });
}
