/**
 * The SNS publish of a one-time code: the SNS client (its XML protocol included) in a module of
 * its own, which sns-notifier.ts loads when the first code is sent. In a
 * bundle it is a chunk of the token function that a cold start serving a login without a code, a
 * refresh or the JWKS never reads. Its classes are imported by name: esbuild cannot tree-shake a
 * package reached by `import()` itself, so that form would put every SNS command in the chunk.
 */
import { PublishCommand, SNSClient } from '@aws-sdk/client-sns';
import type { OutgoingMessage } from './notifier.ts';

/** One SNS publish per message; the client is created on first use. */
export function snsPublisher(topicArn: string, region: string): (m: OutgoingMessage) => Promise<void> {
  let client: SNSClient | undefined;
  return async (m) => {
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
  };
}
