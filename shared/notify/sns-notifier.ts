/**
 * One-time codes in AWS: published to the SNS topic the stack creates (`GATEHOUSE_NOTIFY_TOPIC_ARN`).
 * Only the token function imports this module (functions/token/handler.ts): a bundle carries the
 * SNS client (about 50 KB minified, its XML protocol included) only where a code is sent.
 */
import type * as Sns from '@aws-sdk/client-sns';
import type { Config } from '../config.ts';
import { outboxNotifier, type Notifier } from './notifier.ts';

/**
 * AWS delivery: one SNS publish per message. The client is loaded and created on first use (the
 * bundle carries it, but evaluates it only then: a token function that sends no code at its
 * cold start does not pay for it).
 */
export function snsNotifier(topicArn: string, region: string): Notifier {
  let sdk: Promise<typeof Sns> | undefined;
  let client: Sns.SNSClient | undefined;
  return {
    async send(m) {
      const { SNSClient, PublishCommand } = await (sdk ??= import('@aws-sdk/client-sns'));
      client ??= new SNSClient({ region });
      const attr = (v: string) => ({ DataType: 'String', StringValue: v });
      await client.send(
        new PublishCommand({
          TopicArn: topicArn,
          Subject: 'Your Gatehouse one-time code',
          Message: `Your one-time code for ${m.instance}\\${m.user} is ${m.code}. It is valid for 10 minutes.`,
          MessageAttributes: {
            kind: attr(m.kind),
            instance: attr(m.instance),
            user: attr(m.user),
            ...(m.email ? { email: attr(m.email) } : {}),
          },
        }),
      );
    },
  };
}

/** The notifier for a configuration: SNS when a topic is configured, else the local outbox. */
export function notifierFor(cfg: Pick<Config, 'notifyTopicArn' | 'region' | 'dataDir' | 'logLevel'>): Notifier {
  if (cfg.notifyTopicArn) return snsNotifier(cfg.notifyTopicArn, cfg.region);
  return outboxNotifier(cfg.dataDir, { print: cfg.logLevel !== 'SILENT' });
}
