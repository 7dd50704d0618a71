/**
 * The signing keys' rollover schedule in every region's template: an hourly EventBridge rule that
 * sends `{"action":"maintain"}` to the key manager, which knows its secret, its table and rotation
 * interval from its environment, and may write the secret and the table's JWKS item, nothing else.
 * Verifiers read that item with their DynamoDB client: only the signer and the key manager bundle
 * the Secrets Manager client (test/infra/bundled-clients.test.ts).
 */
import type { CfnElement } from 'aws-cdk-lib';
import { Match } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { buildApp, type GatehouseStack } from '../../infra/app.ts';
import { buildTemplates, cdkJsonContext, newApp, resourcesOf } from './app-fixture.ts';

const built = buildTemplates();
const regions = cdkJsonContext()['gatehouse:regions'] as Record<string, string>;

const logicalId = (stack: GatehouseStack, element: CfnElement): string => stack.resolve(stack.getLogicalId(element)) as string;

describe('signing key rollover', () => {
  it('is scheduled in every region of the context', () => {
    expect(built.stacks.map((s) => s.region).sort()).toEqual(Object.values(regions).sort());
    for (const stack of built.stacks) {
      expect(Object.keys(resourcesOf(built.templates.get(stack.stackName)!, 'AWS::Events::Rule')), stack.stackName).toHaveLength(1);
    }
  });

  describe.each(built.stacks.map((s) => [s.stackName, s] as const))('%s', (_name, stack) => {
    const template = built.templates.get(stack.stackName)!;
    const generatorId = logicalId(stack, stack.keys.generator.function.node.defaultChild as CfnElement);
    const signingId = logicalId(stack, stack.keys.signingKey.node.defaultChild as CfnElement);
    const tableId = logicalId(stack, stack.table.table.node.defaultChild as CfnElement);

    it('runs the key manager hourly with the maintenance action, retried twice, never a stale event', () => {
      template.hasResourceProperties('AWS::Events::Rule', {
        ScheduleExpression: 'rate(1 hour)',
        State: 'ENABLED',
        Targets: [
          {
            Arn: { 'Fn::GetAtt': [generatorId, 'Arn'] },
            Input: JSON.stringify({ action: 'maintain' }),
            RetryPolicy: { MaximumRetryAttempts: 2, MaximumEventAgeInSeconds: 3600 },
          },
        ],
      });
    });

    it('lets only EventBridge rules of this stack invoke the key manager on the schedule', () => {
      const ruleId = logicalId(stack, stack.keys.schedule.node.defaultChild as CfnElement);
      template.hasResourceProperties('AWS::Lambda::Permission', {
        Action: 'lambda:InvokeFunction',
        FunctionName: { 'Fn::GetAtt': [generatorId, 'Arn'] },
        Principal: 'events.amazonaws.com',
        SourceArn: { 'Fn::GetAtt': [ruleId, 'Arn'] },
      });
    });

    it('gives the key manager its secret, its table and the rotation interval (30 days by default)', () => {
      template.hasResourceProperties('AWS::Lambda::Function', {
        Environment: {
          Variables: Match.objectLike({
            GATEHOUSE_SIGNING_KEY_SECRET: { Ref: signingId },
            GATEHOUSE_TABLE_NAME: { Ref: tableId },
            GATEHOUSE_SIGNING_KEY_ROTATION_DAYS: '30',
          }),
        },
      });
      const generatorRole = logicalId(stack, stack.keys.generator.role.node.defaultChild as CfnElement);
      const statements = Object.values(resourcesOf(template, 'AWS::IAM::Policy'))
        .filter((p) => JSON.stringify(p.Properties.Roles).includes(`"${generatorRole}"`))
        .flatMap(
          (p) => (p.Properties.PolicyDocument as { Statement: { Action: string | string[]; Resource: unknown; Condition?: unknown }[] }).Statement,
        );
      for (const action of ['secretsmanager:GetSecretValue', 'secretsmanager:PutSecretValue']) {
        expect(
          statements.some((s) => [s.Action].flat().includes(action) && JSON.stringify(s.Resource).includes(`"${signingId}"`)),
          `${action} on ${signingId}`,
        ).toBe(true);
      }
      // The table: GetItem and PutItem of the JWKS item only (its partition key), no index, no other action.
      const onTable = statements.filter((s) => JSON.stringify(s.Resource).includes(`"${tableId}"`));
      expect(onTable).toEqual([
        {
          Effect: 'Allow',
          Action: ['dynamodb:GetItem', 'dynamodb:PutItem'],
          Resource: { 'Fn::GetAtt': [tableId, 'Arn'] },
          Condition: { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': ['KEYS'] } },
        },
      ]);
    });
  });

  it('takes another rotation interval, and refuses one that is not a whole number of days', async () => {
    const { GatehouseStack } = await import('../../infra/gatehouse-stack.ts');
    const app = newApp();
    const stack = new GatehouseStack(app, 'Gatehouse-T', { env: { region: 'eu-west-1' }, regionCode: 'T', signingKeyRotationDays: 0 });
    expect(JSON.stringify(stack.resolve((stack.keys.generator.function.node.defaultChild as CfnElement & { environment: unknown }).environment))).toContain(
      '"GATEHOUSE_SIGNING_KEY_ROTATION_DAYS":"0"',
    );
    expect(() => new GatehouseStack(newApp(), 'Gatehouse-X', { env: { region: 'eu-west-1' }, regionCode: 'X', signingKeyRotationDays: 1.5 })).toThrow(
      /rotationDays/,
    );
    // The app takes it from the context, in every region.
    const weekly = buildApp(newApp({ 'gatehouse:signingKeyRotationDays': '7' }));
    expect(weekly.length).toBe(Object.keys(regions).length);
    for (const s of weekly) {
      expect(JSON.stringify(s.resolve((s.keys.generator.function.node.defaultChild as CfnElement & { environment: unknown }).environment))).toContain(
        '"GATEHOUSE_SIGNING_KEY_ROTATION_DAYS":"7"',
      );
    }
    expect(() => buildApp(newApp({ 'gatehouse:signingKeyRotationDays': -1 }))).toThrow(/gatehouse:signingKeyRotationDays/);
  });
});

