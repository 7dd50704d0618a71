/**
 * One-time codes in AWS: published to the SNS topic the stack creates (`GATEHOUSE_NOTIFY_TOPIC_ARN`).
 * Only the token function imports this module (functions/token/handler.ts): a bundle carries the
 * SNS client (about 22 KB minified, its XML protocol included) only where a code is sent.
 */
import { PublishCommand, SNSClient } from '@aws-sdk/client-sns';
import type { Config } from '../config.ts';
import { outboxNotifier, type Notifier } from './notifier.ts';

/**
 * AWS delivery: one SNS publish per message. The client is created on first use. Its classes are
 * imported by name, not loaded with `import()`: esbuild cannot tree-shake a package reached by a
 * dynamic import, so that form put the whole SNS client (every command, 47 KB) in the token
 * bundle, against 22 KB for these two (`npm run bench -- --only coldStart`).
 */
export function snsNotifier(topicArn: string, region: string): Notifier {
  let client: SNSClient | undefined;
  return {
    async send(m) {
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
