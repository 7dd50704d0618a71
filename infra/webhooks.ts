/**
 * Webhook delivery in one region: the SQS queue of delivery jobs (one message per event and
 * subscription), its dead-letter queue with an alarm, the webhooks function consuming the queue
 * (SQS event source with ReportBatchItemFailures), and the fan-out's right to queue jobs.
 *
 * A job the sender could not handle (store or queue unavailable) comes back after the visibility
 * timeout; after {@link MAX_RECEIVES} receives it goes to the dead-letter queue and the alarm
 * fires. Failed deliveries are not failures of the job: the sender records them and queues the
 * next attempt itself (DelaySeconds up to 15 min, and visibility for longer steps), so a receiver
 * that stays down fills no dead-letter queue. Egress goes out through Lambda's own networking
 * (no VPC); the sender refuses private targets itself.
 *
 * The job queue is a standard queue used as an SQS fair queue: the sender's jobs carry their
 * instance as MessageGroupId (shared/webhooks/sqs-queue.ts), so an instance with a large share of
 * the messages in flight (dead receivers, a replay) has its messages served after the others'.
 * Nothing to configure here: a standard queue is fair once its messages carry a group id.
 */
import { Duration } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { SIZING } from './sizing.ts';
import { acknowledge } from './nag.ts';

/** Receives of one job before it is dead-lettered (an early job is received about three times per long step). */
export const MAX_RECEIVES = 10;

export interface GatehouseWebhooksProps {
  /** The webhooks function: serves the collection's routes and sends the deliveries. */
  readonly sender: IFunction;
  /** Functions that queue jobs (the fan-out; the sender re-queues its retries itself). */
  readonly producers: readonly IFunction[];
  /**
   * Messages in the dead-letter queue that set off its alarm (`deadLetterMessages` of
   * infra/alarm-thresholds.ts).
   * @default 1
   */
  readonly deadLetterAlarmThreshold?: number;
}

export class GatehouseWebhooks extends Construct {
  readonly queue: Queue;
  readonly deadLetters: Queue;
  readonly deadLetterAlarm: Alarm;

  constructor(scope: Construct, id: string, props: GatehouseWebhooksProps) {
    super(scope, id);
    this.deadLetters = new Queue(this, 'DeadLetters', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    const reason = 'This queue is itself the dead-letter queue of the webhook job queue; operators inspect and redrive it.';
    acknowledge(this.deadLetters, 'AwsSolutions-SQS3', reason);
    acknowledge(this.deadLetters, 'Serverless-SQSRedrivePolicy', reason);

    const senderTimeout = SIZING.webhooks?.timeoutSeconds ?? 30;
    this.queue = new Queue(this, 'Jobs', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      // The retry schedule spans about three days; a job waits at most 15 min + 12 h per step.
      retentionPeriod: Duration.days(14),
      // Six times the function's timeout, as the SQS event source asks.
      visibilityTimeout: Duration.seconds(6 * senderTimeout),
      deadLetterQueue: { queue: this.deadLetters, maxReceiveCount: MAX_RECEIVES },
    });

    props.sender.addEventSource(
      new SqsEventSource(this.queue, {
        batchSize: 10,
        maxBatchingWindow: Duration.seconds(0),
        reportBatchItemFailures: true,
      }),
    );
    acknowledge(
      props.sender,
      'Serverless-LambdaEventSourceMappingDestination',
      'An SQS event source mapping has no on-failure destination: the job queue\'s redrive policy moves a job to ' +
        'the dead-letter queue (with its alarm) after ' + String(MAX_RECEIVES) + ' receives.',
    );
    // Consume (receive, delete, change visibility) and re-queue retries.
    this.queue.grantConsumeMessages(props.sender);
    this.queue.grantSendMessages(props.sender);
    for (const p of props.producers) this.queue.grantSendMessages(p);

    this.deadLetterAlarm = new Alarm(this, 'DeadLettersAlarm', {
      alarmDescription: 'Webhook jobs the sender could not handle reached the dead-letter queue (the table or the queue failed repeatedly).',
      metric: this.deadLetters.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(5), statistic: 'Maximum' }),
      threshold: props.deadLetterAlarmThreshold ?? 1,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
  }
}
