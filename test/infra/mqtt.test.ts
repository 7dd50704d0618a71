/**
 * The MQTT live feed in every regional stack: the IoT custom authorizer and IoT Core's permission
 * to invoke it, the data endpoint read at deploy time, the fan-out's iot:Publish on the live
 * topics and its endpoint, and the MqttUrl output.
 */
import type { CfnElement } from 'aws-cdk-lib';
import { Match } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import type { GatehouseStack } from '../../infra/app.ts';
import { buildTemplates, cdkJsonContext, resourcesOf } from './app-fixture.ts';

const built = buildTemplates();
const regions = Object.values(cdkJsonContext()['gatehouse:regions'] as Record<string, string>);

const idOf = (stack: GatehouseStack, element: CfnElement): string => stack.resolve(stack.getLogicalId(element)) as string;

describe.each(built.stacks.map((s) => [s.region, s] as const))('MQTT in %s', (_region, stack) => {
  const template = built.templates.get(stack.stackName)!;
  const authorizerFn = idOf(stack, stack.functions.get('mqttauth')!.function.node.defaultChild as CfnElement);
  const fanoutFn = idOf(stack, stack.functions.get('fanout')!.function.node.defaultChild as CfnElement);
  const fanoutRole = idOf(stack, stack.functions.get('fanout')!.role.node.defaultChild as CfnElement);
  const authorizerRole = idOf(stack, stack.functions.get('mqttauth')!.role.node.defaultChild as CfnElement);
  const authorizerId = idOf(stack, stack.mqtt.authorizer);
  // IoT Core invokes the function's `live` alias (infra/deployments.ts).
  const authorizerAlias = idOf(stack, stack.functions.get('mqttauth')!.alias!.node.defaultChild as CfnElement);

  const statementsOf = (role: string) =>
    Object.values(resourcesOf(template, 'AWS::IAM::Policy'))
      .filter((p) => JSON.stringify(p.Properties.Roles).includes(`"${role}"`))
      .flatMap((p) => (p.Properties.PolicyDocument as { Statement: Array<{ Action: string | string[]; Resource: unknown; Condition?: unknown }> }).Statement);
  const actions = (role: string) => statementsOf(role).flatMap((s) => [s.Action].flat());

  it('is one of the regions of the context', () => {
    expect(regions).toContain(stack.region);
  });

  it('has an active custom authorizer, signing disabled, on the mqttauth function', () => {
    template.hasResourceProperties('AWS::IoT::Authorizer', {
      AuthorizerName: `${stack.stackName}-mqtt`,
      AuthorizerFunctionArn: { Ref: authorizerAlias },
      SigningDisabled: true,
      Status: 'ACTIVE',
    });
    template.resourceCountIs('AWS::IoT::Authorizer', 1);
    const fn = resourcesOf(template, 'AWS::Lambda::Function')[authorizerFn]!.Properties;
    expect(fn.Timeout).toBeLessThanOrEqual(5);
    expect(Object.keys((fn.Environment as { Variables: Record<string, unknown> }).Variables)).toEqual(
      expect.arrayContaining(['GATEHOUSE_TABLE_NAME', 'GATEHOUSE_PUBLIC_KEYS']),
    );
  });

  it('lets IoT Core, for this authorizer only, invoke the authorizer function', () => {
    template.hasResourceProperties('AWS::Lambda::Permission', {
      Action: 'lambda:InvokeFunction',
      FunctionName: { Ref: authorizerAlias },
      Principal: 'iot.amazonaws.com',
      SourceArn: { 'Fn::GetAtt': [authorizerId, 'Arn'] },
    });
  });

  it('lets the authorizer read the table (the public keys among its items), and write only its MQTT client records', () => {
    const a = actions(authorizerRole);
    expect(a).toEqual(expect.arrayContaining(['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query']));
    expect(a.filter((x) => x.startsWith('secretsmanager:'))).toEqual([]);
    expect(a.filter((x) => /dynamodb:(Put|Update|Delete|BatchWrite|Scan)/.test(x))).toEqual(['dynamodb:PutItem']);
    const put = statementsOf(authorizerRole).find((s) => [s.Action].flat().includes('dynamodb:PutItem'));
    expect(put?.Condition).toEqual({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['MQC#*'] } });
    expect(a.filter((x) => x.startsWith('iot:'))).toEqual([]);
  });

  it('reads the IoT data endpoint at deploy time with iot:DescribeEndpoint (iot:Data-ATS)', () => {
    const lookups = Object.values(resourcesOf(template, 'Custom::AWS')).map((r) => JSON.stringify(r.Properties));
    expect(lookups.some((l) => l.includes('describeEndpoint') && l.includes('iot:Data-ATS'))).toBe(true);
    const policies = Object.values(resourcesOf(template, 'AWS::IAM::Policy')).map((p) => JSON.stringify(p.Properties.PolicyDocument));
    expect(policies.some((p) => p.includes('"iot:DescribeEndpoint"'))).toBe(true);
  });

  it('lets the fan-out publish to the live topics only, and gives it the data endpoint', () => {
    const publish = statementsOf(fanoutRole).filter((s) => [s.Action].flat().includes('iot:Publish'));
    expect(publish).toHaveLength(1);
    expect([publish[0]!.Action].flat()).toEqual(['iot:Publish']);
    expect(JSON.stringify(publish[0]!.Resource)).toContain(':topic//*');
    const env = (resourcesOf(template, 'AWS::Lambda::Function')[fanoutFn]!.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
    expect(JSON.stringify(env.GATEHOUSE_MQTT_PUBLISH_URL)).toContain('https://');
    expect(JSON.stringify(env.GATEHOUSE_MQTT_PUBLISH_URL)).toContain('endpointAddress');
    // No other function may publish.
    for (const [family, fn] of stack.functions) {
      if (family === 'fanout') continue;
      expect(actions(idOf(stack, fn.role.node.defaultChild as CfnElement)), family).not.toContain('iot:Publish');
    }
  });

  it("lets only the fan-out disconnect MQTT clients (a revoked user's), on client ids only", () => {
    const disconnect = statementsOf(fanoutRole).filter((s) => [s.Action].flat().includes('iot:DeleteConnection'));
    expect(disconnect).toHaveLength(1);
    expect([disconnect[0]!.Action].flat()).toEqual(['iot:DeleteConnection']);
    expect(JSON.stringify(disconnect[0]!.Resource)).toContain(':client/*');
    for (const [family, fn] of stack.functions) {
      if (family === 'fanout') continue;
      expect(actions(idOf(stack, fn.role.node.defaultChild as CfnElement)), family).not.toContain('iot:DeleteConnection');
    }
  });

  it('outputs MqttUrl (wss://<endpoint>/mqtt with the authorizer name) and tells sysinfo', () => {
    const output = template.findOutputs('MqttUrl');
    const value = JSON.stringify(Object.values(output)[0]!.Value);
    expect(value).toContain('wss://');
    expect(value).toContain('endpointAddress');
    expect(value).toContain(`/mqtt?x-amz-customauthorizer-name=${stack.stackName}-mqtt`);
    const service = idOf(stack, stack.functions.get('service')!.function.node.defaultChild as CfnElement);
    template.hasResourceProperties('AWS::Lambda::Function', Match.objectLike({ Environment: { Variables: Match.objectLike({ GATEHOUSE_MQTT_PUBLISHER_URL: Match.anyValue() }) } }));
    const env = (resourcesOf(template, 'AWS::Lambda::Function')[service]!.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
    expect(JSON.stringify(env.GATEHOUSE_MQTT_PUBLISHER_URL)).toBe(value);
  });
});
