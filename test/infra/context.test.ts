import { App, type CfnElement } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { DEFAULT_REGIONS, readGatehouseContext } from '../../infra/cdk-context.ts';
import { httpFamilies } from '../../shared/routes.ts';
import { buildTemplates, cdkJsonContext, resourcesOf } from './app-fixture.ts';

const read = (context: Record<string, unknown>) => readGatehouseContext(new App({ context }).node);

describe('Gatehouse CDK context', () => {
  it('defaults to three regions, deletion protection on, CORS closed, no custom domains, the runtime\'s AWS SDK', () => {
    expect(read({})).toEqual({
      regions: DEFAULT_REGIONS,
      deletionProtection: true,
      corsOrigins: [],
      customDomains: {},
      websocketAccessLogs: false,
      licenseAuthorityKey: undefined,
      bundleAwsSdk: true,
      eventRetentionDays: 365,
      deployment: 'AllAtOnce',
      alarmThresholds: {},
      signingKeyRotationDays: 30,
      rateLimitPerInstance: 100,
      rateLimitPerUser: 20,
    });
  });

  it('gives the licence authority public key to the token function only, and refuses a private key', () => {
    const pub = { kty: 'EC', crv: 'P-256', x: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU', y: 'x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0' };
    const { templates } = buildTemplates({ 'gatehouse:licenseAuthorityKey': pub });
    for (const template of templates.values()) {
      const fns = Object.values(resourcesOf(template, 'AWS::Lambda::Function'));
      const withKey = fns.filter((f) => JSON.stringify(f.Properties).includes('GATEHOUSE_LICENSE_AUTHORITY_KEY'));
      expect(withKey).toHaveLength(1);
      expect(JSON.stringify(withKey[0]!.Properties)).toContain('f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU');
    }
    expect(() => read({ 'gatehouse:licenseAuthorityKey': { ...pub, d: 'secret' } })).toThrow(/private key/);
  });

  it('matches cdk.json', () => {
    expect(read(cdkJsonContext())).toEqual(read({}));
  });

  it('accepts the string forms `cdk -c key=value` passes', () => {
    const ctx = read({
      'gatehouse:regions': '{"EU":"eu-west-1"}',
      'gatehouse:deletionProtection': 'false',
      'gatehouse:corsOrigins': 'https://a.example.com,https://b.example.com',
      'gatehouse:websocketAccessLogs': 'true',
      'gatehouse:bundleAwsSdk': 'false',
      'gatehouse:eventRetentionDays': '90',
    });
    expect(ctx).toMatchObject({
      regions: { EU: 'eu-west-1' },
      deletionProtection: false,
      corsOrigins: ['https://a.example.com', 'https://b.example.com'],
      websocketAccessLogs: true,
      bundleAwsSdk: false,
      eventRetentionDays: 90,
    });
  });

  it('rejects a custom domain for a region that is not deployed', () => {
    expect(() =>
      read({ 'gatehouse:customDomains': { AU: { certificateArn: 'arn:aws:acm:ap-southeast-2:1:certificate/x' } } }),
    ).toThrow(/gatehouse:customDomains.*AU/);
  });

  it('rejects a deletion protection value that is not a boolean', () => {
    expect(() => read({ 'gatehouse:deletionProtection': 'off' })).toThrow(/gatehouse:deletionProtection/);
  });

  it('rejects an event retention that is not a whole number of days from 1 to 36500', () => {
    for (const bad of ['0', '36501', '1.5', 'a year', -3]) expect(() => read({ 'gatehouse:eventRetentionDays': bad })).toThrow(/gatehouse:eventRetentionDays/);
  });

  it('gives the event retention to the functions that write events, and to no other', () => {
    const { stacks, templates } = buildTemplates({ 'gatehouse:regions': { EU: 'eu-west-1' }, 'gatehouse:eventRetentionDays': 30 });
    const stack = stacks[0]!;
    const functions = resourcesOf(templates.get(stack.stackName)!, 'AWS::Lambda::Function');
    const days = new Map<string, unknown>();
    for (const [family, fn] of stack.functions) {
      const id = stack.getLogicalId(fn.function.node.defaultChild as CfnElement);
      const vars = (functions[id]!.Properties.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {};
      if ('GATEHOUSE_EVENT_RETENTION_DAYS' in vars) days.set(family, vars.GATEHOUSE_EVENT_RETENTION_DAYS);
    }
    expect(Object.fromEntries(days)).toEqual({ events: '30', fanout: '30' });
  });

  it('reads the tenant rate limits, 0 turning one off, and refuses one that is not a whole number of at least 0', () => {
    expect(read({ 'gatehouse:rateLimitPerInstance': '500', 'gatehouse:rateLimitPerUser': 0 })).toMatchObject({ rateLimitPerInstance: 500, rateLimitPerUser: 0 });
    for (const bad of ['abc', '-1', -1, '2.5', 1_000_001]) {
      expect(() => read({ 'gatehouse:rateLimitPerInstance': bad })).toThrow(/gatehouse:rateLimitPerInstance/);
      expect(() => read({ 'gatehouse:rateLimitPerUser': bad })).toThrow(/gatehouse:rateLimitPerUser/);
    }
  });

  it('gives the tenant rate limits to every HTTP family and keeps the stage throttling as the backstop', () => {
    const limitsOf = (extra: Record<string, unknown>) => {
      const { stacks, templates } = buildTemplates({ 'gatehouse:regions': { EU: 'eu-west-1' }, ...extra });
      const stack = stacks[0]!;
      const template = templates.get(stack.stackName)!;
      const functions = resourcesOf(template, 'AWS::Lambda::Function');
      const limits = new Map<string, unknown>();
      for (const [family, fn] of stack.functions) {
        const id = stack.getLogicalId(fn.function.node.defaultChild as CfnElement);
        const vars = (functions[id]!.Properties.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {};
        if ('GATEHOUSE_RATE_LIMIT_PER_INSTANCE' in vars) limits.set(family, [vars.GATEHOUSE_RATE_LIMIT_PER_INSTANCE, vars.GATEHOUSE_RATE_LIMIT_PER_USER]);
      }
      const stage = resourcesOf(template, 'AWS::ApiGatewayV2::Stage')[stack.getLogicalId(stack.httpApi.stage.node.defaultChild as CfnElement)]!;
      return { limits, stage };
    };
    const defaults = limitsOf({});
    expect([...defaults.limits.keys()].sort()).toEqual([...httpFamilies()].sort());
    for (const values of defaults.limits.values()) expect(values).toEqual(['100', '20']);
    expect(defaults.stage.Properties.DefaultRouteSettings).toEqual({ ThrottlingRateLimit: 100, ThrottlingBurstLimit: 200 });

    const custom = limitsOf({ 'gatehouse:rateLimitPerInstance': 300, 'gatehouse:rateLimitPerUser': '0' });
    for (const values of custom.limits.values()) expect(values).toEqual(['300', '0']);
    expect(custom.stage.Properties.DefaultRouteSettings).toEqual({ ThrottlingRateLimit: 100, ThrottlingBurstLimit: 200 });
  });

  it('rejects a bundleAwsSdk value that is not a boolean', () => {
    expect(() => read({ 'gatehouse:bundleAwsSdk': 'yes' })).toThrow(/gatehouse:bundleAwsSdk/);
  });
});
