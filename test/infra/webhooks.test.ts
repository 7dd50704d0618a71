/**
 * Webhook delivery in every regional stack: the job queue with its dead-letter queue and alarm,
 * the webhooks function consuming it (ReportBatchItemFailures), the fan-out's right to queue
 * jobs, the queue URL in both functions and loopback targets refused (test/infra/bundled-clients.test.ts:
 * the SQS client is bundled only where it is used).
 */
import type { CfnElement } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import type { GatehouseStack } from '../../infra/app.ts';
import { MAX_RECEIVES } from '../../infra/webhooks.ts';
import { buildTemplates, cdkJsonContext, resourcesOf } from './app-fixture.ts';

const built = buildTemplates();
const regions = Object.values(cdkJsonContext()['gatehouse:regions'] as Record<string, string>);

const idOf = (stack: GatehouseStack, element: CfnElement): string => stack.resolve(stack.getLogicalId(element)) as string;

describe('webhooks in every region', () => {
  it('builds one stack per region of the context', () => {
    expect(built.stacks.map((s) => s.region).sort()).toEqual([...regions].sort());
  });
});

describe.each(built.stacks.map((s) => [s.region, s] as const))('webhooks in %s', (_region, stack) => {
  const template = built.templates.get(stack.stackName)!;
  const queueId = idOf(stack, stack.webhooks.queue.node.defaultChild as CfnElement);
  const dlqId = idOf(stack, stack.webhooks.deadLetters.node.defaultChild as CfnElement);
  const senderFn = idOf(stack, stack.functions.get('webhooks')!.function.node.defaultChild as CfnElement);
  // The queue's event source invokes the function's `live` alias (infra/deployments.ts).
  const senderAlias = idOf(stack, stack.functions.get('webhooks')!.alias!.node.defaultChild as CfnElement);
  const senderRole = idOf(stack, stack.functions.get('webhooks')!.role.node.defaultChild as CfnElement);
  const fanoutFn = idOf(stack, stack.functions.get('fanout')!.function.node.defaultChild as CfnElement);
  const fanoutRole = idOf(stack, stack.functions.get('fanout')!.role.node.defaultChild as CfnElement);

  const actions = (role: string) =>
    Object.values(resourcesOf(template, 'AWS::IAM::Policy'))
      .filter((p) => JSON.stringify(p.Properties.Roles).includes(`"${role}"`))
      .flatMap((p) => (p.Properties.PolicyDocument as { Statement: Array<{ Action: string | string[]; Resource: unknown }> }).Statement)
      .filter((s) => JSON.stringify(s.Resource).includes(`"${queueId}"`))
      .flatMap((s) => [s.Action].flat());
  const env = (fn: string) =>
    (resourcesOf(template, 'AWS::Lambda::Function')[fn]!.Properties.Environment as { Variables: Record<string, unknown> }).Variables;

  it('has an encrypted job queue that dead-letters after a bounded number of receives', () => {
    const q = resourcesOf(template, 'AWS::SQS::Queue')[queueId]!.Properties;
    expect(q.SqsManagedSseEnabled).toBe(true);
    expect(q.MessageRetentionPeriod).toBe(14 * 86_400);
    expect(q.VisibilityTimeout).toBeGreaterThanOrEqual(6 * 30);
    expect(q.RedrivePolicy).toEqual({ deadLetterTargetArn: { 'Fn::GetAtt': [dlqId, 'Arn'] }, maxReceiveCount: MAX_RECEIVES });
  });

  it('alarms when a job reaches the dead-letter queue', () => {
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Namespace: 'AWS/SQS',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [dlqId, 'QueueName'] } }],
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
  });

  it('feeds the job queue to the webhooks function with partial batch failures', () => {
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: { 'Fn::GetAtt': [queueId, 'Arn'] },
      FunctionName: { 'Fn::Join': ['', [{ 'Fn::Select': [6, { 'Fn::Split': [':', { Ref: senderAlias }] }] }, ':live']] },
      BatchSize: 10,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
    expect(resourcesOf(template, 'AWS::Lambda::Function')[senderFn]!.Properties.Timeout).toBe(30);
  });

  it('lets the sender consume and re-queue jobs, and the fan-out only send them', () => {
    expect(actions(senderRole)).toEqual(expect.arrayContaining(['sqs:ReceiveMessage', 'sqs:ChangeMessageVisibility', 'sqs:DeleteMessage', 'sqs:SendMessage']));
    const fanout = actions(fanoutRole);
    expect(fanout).toContain('sqs:SendMessage');
    expect(fanout.filter((a) => /Receive|Delete|Purge/.test(a))).toEqual([]);
  });

  it('gives both the queue URL and refuses loopback targets', () => {
    for (const fn of [senderFn, fanoutFn]) {
      expect(env(fn).GATEHOUSE_WEBHOOK_QUEUE_URL).toEqual({ Ref: queueId });
      expect(env(fn).GATEHOUSE_WEBHOOK_ALLOW_LOOPBACK).toBe('false');
    }
    // No other function knows the queue.
    for (const [family, fn] of stack.functions) {
      if (family === 'webhooks' || family === 'fanout') continue;
      const id = idOf(stack, fn.function.node.defaultChild as CfnElement);
      expect(env(id).GATEHOUSE_WEBHOOK_QUEUE_URL, family).toBeUndefined();
    }
  });
});

describe.each(built.stacks.map((s) => [s.region, s] as const))('webhook secrets at rest in %s', (_region, stack) => {
  const template = built.templates.get(stack.stackName)!;
  const keyId = idOf(stack, stack.webhooks.secretKey.node.defaultChild as CfnElement);
  const env = (fn: string) =>
    (resourcesOf(template, 'AWS::Lambda::Function')[fn]!.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
  /** The roles allowed to read the key secret. */
  const readers = () =>
    Object.values(resourcesOf(template, 'AWS::IAM::Policy'))
      .filter((p) =>
        (p.Properties.PolicyDocument as { Statement: Array<{ Action: string | string[]; Resource: unknown }> }).Statement.some(
          (s) => [s.Action].flat().includes('secretsmanager:GetSecretValue') && JSON.stringify(s.Resource).includes(`"${keyId}"`),
        ),
      )
      .flatMap((p) => (p.Properties.Roles as Array<{ Ref: string }>).map((r) => r.Ref))
      .sort();

  it('generates a random key secret, kept when the stack goes (the stored secrets need it)', () => {
    const secret = resourcesOf(template, 'AWS::SecretsManager::Secret')[keyId]!;
    expect(secret.Properties.GenerateSecretString).toMatchObject({ PasswordLength: 64, ExcludePunctuation: true });
    expect((template.toJSON().Resources as Record<string, { DeletionPolicy?: string }>)[keyId]!.DeletionPolicy).toBe('Retain');
  });

  it('names it to the sender, the fan-out and the identity providers\' writer and reader (folders, token) only, and lets only them read it', () => {
    const holders = (['webhooks', 'fanout', 'folders', 'token'] as const).map((f) => stack.functions.get(f)!);
    for (const fn of holders) {
      expect(env(idOf(stack, fn.function.node.defaultChild as CfnElement)).GATEHOUSE_WEBHOOK_SECRET_KEY_SECRET).toEqual({ Ref: keyId });
    }
    expect(readers()).toEqual(holders.map((fn) => idOf(stack, fn.role.node.defaultChild as CfnElement)).sort());
    for (const [family, fn] of stack.functions) {
      if (family === 'webhooks' || family === 'fanout' || family === 'folders' || family === 'token') continue;
      expect(env(idOf(stack, fn.function.node.defaultChild as CfnElement)).GATEHOUSE_WEBHOOK_SECRET_KEY_SECRET, family).toBeUndefined();
    }
  });
});
