/**
 * The two SQS calls the delivery queue makes, with the SQS client: a module of its own, which
 * sqs-queue.ts loads on the first job sent or deferred. In a bundle it is a chunk that a cold start
 * queueing nothing (a webhooks list, a fan-out batch without webhook subscribers) never reads. The
 * classes are imported by name: esbuild cannot tree-shake a package reached by `import()` itself,
 * so that form would put every SQS command in the chunk.
 */
import { ChangeMessageVisibilityCommand, SendMessageBatchCommand, SQSClient, type SQSClientConfig } from '@aws-sdk/client-sqs';

export interface SqsCalls {
  /** One SendMessageBatch; the ids of the entries SQS refused. */
  sendBatch(queueUrl: string, entries: ReadonlyArray<{ Id: string; MessageBody: string; DelaySeconds: number; MessageGroupId: string }>): Promise<string[]>;
  changeVisibility(queueUrl: string, receiptHandle: string, seconds: number): Promise<void>;
}

export function sqsCalls(config: SQSClientConfig): SqsCalls {
  const client = new SQSClient(config);
  return {
    async sendBatch(queueUrl, entries) {
      const out = await client.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: [...entries] }));
      return (out.Failed ?? []).map((f) => f.Id ?? '');
    },
    async changeVisibility(queueUrl, receiptHandle, seconds) {
      await client.send(new ChangeMessageVisibilityCommand({ QueueUrl: queueUrl, ReceiptHandle: receiptHandle, VisibilityTimeout: seconds }));
    },
  };
}
