/**
 * One-time codes in AWS: published to the SNS topic the stack creates (`GATEHOUSE_NOTIFY_TOPIC_ARN`).
 * Only the token function imports this module (functions/token/handler.ts): a bundle carries the
 * SNS client only where a code is sent, and loads it with the first code (sns-publish.ts).
 */
import type { Config } from '../config.ts';
import { outboxNotifier, type Notifier } from './notifier.ts';
import { onFirstUse } from '../first-use.ts';

/**
 * AWS delivery: one SNS publish per message (sns-publish.ts, loaded with the SNS client on the first
 * message; the load is kept, as the module is part of the same bundle).
 */
export function snsNotifier(topicArn: string, region: string): Notifier {
  const publish = onFirstUse(() => import('./sns-publish.ts').then((mod) => mod.snsPublisher(topicArn, region)));
  return {
    async send(m) {
      await (await publish())(m);
    },
  };
}

/** The notifier for a configuration: SNS when a topic is configured, else the local outbox. */
export function notifierFor(cfg: Pick<Config, 'notifyTopicArn' | 'region' | 'dataDir' | 'logLevel'>): Notifier {
  if (cfg.notifyTopicArn) return snsNotifier(cfg.notifyTopicArn, cfg.region);
  return outboxNotifier(cfg.dataDir, { print: cfg.logLevel !== 'SILENT' });
}
