import { join } from 'node:path';
import { Match } from 'aws-cdk-lib/assertions';
import type { CfnElement } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { buildApp, type GatehouseStack } from '../../infra/app.ts';
import { PROJECT_ROOT } from '../../infra/bundling.ts';
import { TABLE } from '../../shared/db/table.ts';
import type { Family } from '../../shared/model/collections.ts';
import { ROUTES, WEBSOCKET_ROUTES, httpFamilies, routeKey } from '../../shared/routes.ts';
import { buildTemplates, cdkJsonContext, newApp, resourcesOf } from './app-fixture.ts';

const built = buildTemplates();
const regions = cdkJsonContext()['gatehouse:regions'] as Record<string, string>;

function logicalId(stack: GatehouseStack, element: CfnElement): string {
  return stack.resolve(stack.getLogicalId(element)) as string;
}

function functionId(stack: GatehouseStack, family: Family): string {
  const fn = stack.functions.get(family);
  if (!fn) throw new Error(`no function for ${family}`);
  return logicalId(stack, fn.function.node.defaultChild as CfnElement);
}

/** The `live` alias of a family: what every caller invokes. */
function aliasId(stack: GatehouseStack, family: Family): string {
  return logicalId(stack, stack.functions.get(family)!.alias!.node.defaultChild as CfnElement);
}

/** An event source mapping's `FunctionName` when it invokes a family's `live` alias. */
function aliasFunctionName(stack: GatehouseStack, family: Family): unknown {
  return { 'Fn::Join': ['', [{ 'Fn::Select': [6, { 'Fn::Split': [':', { Ref: aliasId(stack, family) }] }] }, ':live']] };
}

function roleId(stack: GatehouseStack, family: Family): string {
  return logicalId(stack, stack.functions.get(family)!.role.node.defaultChild as CfnElement);
}

/** Every `Action` of the inline policies attached to a role, with the resources they name. */
function policyStatementsOf(stack: GatehouseStack, role: string): { Action: string | string[]; Resource: unknown; Condition?: unknown }[] {
  const template = built.templates.get(stack.stackName)!;
  return Object.values(resourcesOf(template, 'AWS::IAM::Policy'))
    .filter((p) => JSON.stringify(p.Properties.Roles).includes(`"${role}"`))
    .flatMap((p) => (p.Properties.PolicyDocument as { Statement: { Action: string | string[]; Resource: unknown }[] }).Statement);
}

function actionsOf(stack: GatehouseStack, role: string): Set<string> {
  return new Set(policyStatementsOf(stack, role).flatMap((s) => (Array.isArray(s.Action) ? s.Action : [s.Action])));
}

describe('the Gatehouse app', () => {
  it('has one stack per region of the context, in that region', () => {
    expect(built.stacks.map((s) => s.stackName).sort()).toEqual(Object.keys(regions).map((c) => `Gatehouse-${c}`).sort());
    for (const stack of built.stacks) {
      expect(stack.region).toBe(regions[stack.stackName.replace('Gatehouse-', '')]);
    }
  });

  it('stays well under the CloudFormation resource limit', () => {
    const counts = Object.fromEntries(
      [...built.templates].map(([name, t]) => [name, Object.keys(t.toJSON().Resources as object).length]),
    );
    console.log('resources per stack:', counts);
    // CloudFormation's limit is 500; one route is one resource. Single sign-on, SCIM, the decisions
    // and the doors brought a stack to about 465 (rows share a route where they can:
    // Route.gateway). The routes move into a nested stack before this reaches 475.
    for (const count of Object.values(counts)) expect(count).toBeLessThan(470);
  });
});

describe.each(built.stacks.map((s) => [s.stackName, s] as const))('%s', (_name, stack) => {
  const template = built.templates.get(stack.stackName)!;
  const httpApiId = logicalId(stack, stack.httpApi.api.node.defaultChild as CfnElement);
  const wsApiId = logicalId(stack, stack.webSocketApi.api.node.defaultChild as CfnElement);

  it('has the table of shared/db/table.ts: keys, GSIs, TTL, stream, PITR, encryption, protection', () => {
    template.resourceCountIs('AWS::DynamoDB::Table', 1);
    template.hasResource('AWS::DynamoDB::Table', {
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
      Properties: {
        KeySchema: [
          { AttributeName: TABLE.partitionKey, KeyType: 'HASH' },
          { AttributeName: TABLE.sortKey, KeyType: 'RANGE' },
        ],
        BillingMode: 'PAY_PER_REQUEST',
        GlobalSecondaryIndexes: TABLE.indexes.map((i) => ({
          IndexName: i.name,
          KeySchema: [
            { AttributeName: i.partitionKey, KeyType: 'HASH' },
            { AttributeName: i.sortKey, KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        })),
        TimeToLiveSpecification: { AttributeName: TABLE.ttlAttribute, Enabled: true },
        StreamSpecification: { StreamViewType: 'NEW_AND_OLD_IMAGES' },
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        SSESpecification: { SSEEnabled: true },
        DeletionProtectionEnabled: true,
      },
    });
    const attributes = (Object.values(resourcesOf(template, 'AWS::DynamoDB::Table'))[0]!.Properties
      .AttributeDefinitions as { AttributeName: string; AttributeType: string }[]);
    expect(attributes.every((a) => a.AttributeType === 'S')).toBe(true);
    expect(attributes.map((a) => a.AttributeName).sort()).toEqual(
      [TABLE.partitionKey, TABLE.sortKey, ...TABLE.indexes.flatMap((i) => [i.partitionKey, i.sortKey])].sort(),
    );
  });

  it('has one Node.js 22 arm64 function per HTTP family, plus websocket, fanout, mqttauth and keygen', () => {
    const families = [...httpFamilies(), 'websocket', 'fanout', 'mqttauth'] as Family[];
    expect([...stack.functions.keys()].sort()).toEqual([...families].sort());
    // And CDK's AwsCustomResource provider (the IoT data endpoint lookup at deploy time).
    template.resourceCountIs('AWS::Lambda::Function', families.length + 2);
    const ours = Object.entries(resourcesOf(template, 'AWS::Lambda::Function')).filter(([id]) => !id.startsWith('AWS679f53fac002430cb0da5b7982bd2287'));
    expect(ours).toHaveLength(families.length + 1);
    for (const [, fn] of ours) {
      expect(fn.Properties).toMatchObject({
        Runtime: 'nodejs22.x',
        Architectures: ['arm64'],
        Handler: 'index.handler',
        TracingConfig: { Mode: 'Active' },
        LoggingConfig: { LogGroup: { Ref: expect.any(String) } },
      });
      expect(fn.Properties.MemorySize).toBeGreaterThanOrEqual(256);
    }
    const token = resourcesOf(template, 'AWS::Lambda::Function')[functionId(stack, 'token')]!.Properties;
    expect(token.MemorySize).toBeGreaterThanOrEqual(1024);
    expect(token.Timeout).toBe(15);
    const people = resourcesOf(template, 'AWS::Lambda::Function')[functionId(stack, 'people')]!.Properties;
    expect(people).toMatchObject({ MemorySize: 512, Timeout: 10 });
  });

  it('gives every function a code asset of its own', () => {
    // CDK keys its asset cache on the bundling options: functions bundled alike would share one.
    const keys = Object.values(resourcesOf(template, 'AWS::Lambda::Function')).map((fn) => (fn.Properties.Code as { S3Key?: unknown }).S3Key);
    expect(keys.length).toBeGreaterThan(3);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('bundles the AWS SDK into every function, keygen included', () => {
    const fns = [...stack.functions.values(), stack.keys.generator];
    for (const fn of fns) expect(fn.bundling.externalModules).toEqual([]);
  });

  it('ships the OpenAPI document and the reference page script beside the service function\'s code, and nothing beside the others', () => {
    const service = stack.functions.get('service')!;
    expect(service.bundling.files).toEqual([
      { from: join(PROJECT_ROOT, 'docs/openapi.json'), to: 'openapi.json' },
      { from: join(PROJECT_ROOT, 'node_modules/@scalar/api-reference/dist/browser/standalone.js'), to: 'api-reference.js' },
    ]);
    for (const [family, fn] of stack.functions) if (family !== 'service') expect(fn.bundling.files, family).toEqual([]);
  });

  it('keeps every log group for a limited time', () => {
    for (const group of Object.values(resourcesOf(template, 'AWS::Logs::LogGroup'))) {
      expect(group.Properties.RetentionInDays).toEqual(expect.any(Number));
    }
  });

  it('gives every function its table, URLs and public keys in the environment; only token the signing key and topic', () => {
    const functions = resourcesOf(template, 'AWS::Lambda::Function');
    for (const family of httpFamilies()) {
      const env = (functions[functionId(stack, family)]!.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
      expect(Object.keys(env)).toEqual(
        expect.arrayContaining([
          'GATEHOUSE_TABLE_NAME',
          'GATEHOUSE_REGION',
          'GATEHOUSE_EVENT_PUBLISHER_URL',
          'GATEHOUSE_WEBSOCKET_MANAGEMENT_URL',
          'GATEHOUSE_PUBLIC_KEYS',
        ]),
      );
      expect(env.GATEHOUSE_REGION).toBe(stack.region);
      expect(JSON.stringify(env.GATEHOUSE_EVENT_PUBLISHER_URL)).toContain('wss://');
      expect(JSON.stringify(env.GATEHOUSE_WEBSOCKET_MANAGEMENT_URL)).toContain('https://');
      expect('GATEHOUSE_SIGNING_KEY_SECRET' in env).toBe(family === 'token');
      expect('GATEHOUSE_NOTIFY_TOPIC_ARN' in env).toBe(family === 'token');
      expect('GATEHOUSE_CORS_ORIGINS' in env).toBe(false);
    }
  });

  it('routes exactly the route table, each row to its family', () => {
    const integrations = resourcesOf(template, 'AWS::ApiGatewayV2::Integration');
    const routes = Object.values(resourcesOf(template, 'AWS::ApiGatewayV2::Route')).filter(
      (r) => (r.Properties.ApiId as { Ref: string }).Ref === httpApiId,
    );
    const keys = routes.map((r) => r.Properties.RouteKey as string);
    // One route per API Gateway route key: rows may share one (Route.gateway).
    expect(keys.length).toBe(new Set(ROUTES.map(routeKey)).size);
    expect(new Set(keys)).toEqual(new Set(ROUTES.map(routeKey)));

    const byKey = new Map(routes.map((r) => [r.Properties.RouteKey as string, r.Properties]));
    for (const row of ROUTES) {
      const target = byKey.get(routeKey(row))!.Target as { 'Fn::Join': [string, [string, { Ref: string }]] };
      const [prefix, ref] = target['Fn::Join'][1];
      expect(prefix).toBe('integrations/');
      const integration = integrations[ref.Ref]!.Properties;
      expect(integration).toMatchObject({ IntegrationType: 'AWS_PROXY', PayloadFormatVersion: '2.0' });
      expect(integration.IntegrationUri).toEqual({ Ref: aliasId(stack, row.family) });
    }
  });

  it('has one integration and one invoke permission per HTTP family, for any route of the API', () => {
    const httpIntegrations = Object.values(resourcesOf(template, 'AWS::ApiGatewayV2::Integration')).filter(
      (i) => (i.Properties.ApiId as { Ref: string }).Ref === httpApiId,
    );
    expect(httpIntegrations.length).toBe(httpFamilies().length);
    for (const family of httpFamilies()) {
      const permissions = Object.values(resourcesOf(template, 'AWS::Lambda::Permission')).filter(
        (p) => JSON.stringify(p.Properties.FunctionName).includes(`"${aliasId(stack, family)}"`),
      );
      expect(permissions).toHaveLength(1);
      expect(permissions[0]!.Properties.Principal).toBe('apigateway.amazonaws.com');
      const sourceArn = JSON.stringify(permissions[0]!.Properties.SourceArn);
      expect(sourceArn).toContain(`{"Ref":"${httpApiId}"}`);
      expect(sourceArn).toMatch(/"\/\*\/\*"\]\]\}$/);
    }
  });

  it('serves the HTTP API regionally on $default with throttling and JSON access logs, CORS closed', () => {
    template.hasResourceProperties('AWS::ApiGatewayV2::Api', {
      ProtocolType: 'HTTP',
      CorsConfiguration: Match.absent(),
    });
    template.resourceCountIs('AWS::CloudFront::Distribution', 0);
    const stage = Object.values(resourcesOf(template, 'AWS::ApiGatewayV2::Stage')).find(
      (s) => (s.Properties.ApiId as { Ref: string }).Ref === httpApiId,
    )!.Properties;
    expect(stage).toMatchObject({
      StageName: '$default',
      AutoDeploy: true,
      DefaultRouteSettings: { ThrottlingRateLimit: 100, ThrottlingBurstLimit: 200 },
      AccessLogSettings: { DestinationArn: { 'Fn::GetAtt': [expect.any(String), 'Arn'] } },
    });
    const format = JSON.parse((stage.AccessLogSettings as { Format: string }).Format) as Record<string, string>;
    expect(format).toMatchObject({ requestId: '$context.requestId', routeKey: '$context.routeKey', status: '$context.status' });
  });

  it('routes the WebSocket API to the websocket function and lets websocket and fanout post to connections', () => {
    template.hasResourceProperties('AWS::ApiGatewayV2::Api', { ProtocolType: 'WEBSOCKET' });
    const routes = Object.values(resourcesOf(template, 'AWS::ApiGatewayV2::Route')).filter(
      (r) => (r.Properties.ApiId as { Ref: string }).Ref === wsApiId,
    );
    expect(routes.map((r) => r.Properties.RouteKey).sort()).toEqual([...WEBSOCKET_ROUTES].sort());
    const wsIntegrations = Object.values(resourcesOf(template, 'AWS::ApiGatewayV2::Integration')).filter(
      (i) => (i.Properties.ApiId as { Ref: string }).Ref === wsApiId,
    );
    expect(wsIntegrations.length).toBeGreaterThan(0);
    for (const integration of wsIntegrations) {
      expect(JSON.stringify(integration.Properties.IntegrationUri)).toContain(`"${aliasId(stack, 'websocket')}"`);
    }
    template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      ApiId: { Ref: wsApiId },
      StageName: 'events',
      AutoDeploy: true,
      DefaultRouteSettings: { ThrottlingRateLimit: 100, ThrottlingBurstLimit: 200 },
    });
    for (const family of ['websocket', 'fanout'] as const) {
      expect(actionsOf(stack, roleId(stack, family)).has('execute-api:ManageConnections')).toBe(true);
    }
    for (const family of httpFamilies()) {
      expect(actionsOf(stack, roleId(stack, family)).has('execute-api:ManageConnections')).toBe(false);
    }
  });

  it('feeds the table stream to the fan-out with retries, bisection, partial failures and an encrypted DLQ', () => {
    const queueId = logicalId(stack, stack.fanoutDeadLetters.node.defaultChild as CfnElement);
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: aliasFunctionName(stack, 'fanout'),
      EventSourceArn: { 'Fn::GetAtt': [Match.anyValue(), 'StreamArn'] },
      BatchSize: 100,
      MaximumRetryAttempts: 5,
      BisectBatchOnFunctionError: true,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      StartingPosition: 'LATEST',
      DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [queueId, 'Arn'] } } },
    });
    // Unfiltered: the fan-out keeps its subscriber cache current from the subscription and
    // connection records, and the audit trail and metering read every object change.
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', { FunctionName: aliasFunctionName(stack, 'fanout'), FilterCriteria: Match.absent() });
    template.hasResourceProperties('AWS::SQS::Queue', { SqsManagedSseEnabled: true });
    template.hasResourceProperties('AWS::SQS::QueuePolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
        ]),
      },
    });
  });

  it('grants the table to every family but service (mqttauth reads and puts only its MQTT client records), never Scan, and names each index', () => {
    const tableId = logicalId(stack, stack.table.table.node.defaultChild as CfnElement);
    for (const family of stack.functions.keys()) {
      const statements = policyStatementsOf(stack, roleId(stack, family)).filter((s) =>
        JSON.stringify(s.Resource).includes(`"${tableId}"`),
      );
      const actions = statements.flatMap((s) => (Array.isArray(s.Action) ? s.Action : [s.Action]));
      if (family === 'service') {
        expect(actions).toEqual([]);
        continue;
      }
      expect(actions).toEqual(expect.arrayContaining(['dynamodb:GetItem', 'dynamodb:Query']));
      if (family === 'mqttauth') {
        expect(actions.filter((a) => /Put|Update|Delete|Write/.test(a))).toEqual(['dynamodb:PutItem']);
        const put = statements.find((st) => JSON.stringify(st.Action).includes('dynamodb:PutItem'));
        expect(put?.Condition).toEqual({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['MQC#*'] } });
      }
      else expect(actions).toContain('dynamodb:PutItem');
      expect(actions).not.toContain('dynamodb:Scan');
      expect(JSON.stringify(statements)).not.toContain('/index/*');
      for (const index of TABLE.indexes) expect(JSON.stringify(statements)).toContain(`/index/${index.name}`);
    }
  });

  it('lets only token read the signing key and publish to the topic; verifiers read the public keys from the table', () => {
    const signingId = logicalId(stack, stack.keys.signingKey.node.defaultChild as CfnElement);
    const keysId = logicalId(stack, stack.keys.resource.node.defaultChild as CfnElement);
    const topicId = logicalId(stack, stack.notifyTopic.node.defaultChild as CfnElement);
    const reads = (family: Family, secretId: string) =>
      policyStatementsOf(stack, roleId(stack, family)).some(
        (s) => [s.Action].flat().includes('secretsmanager:GetSecretValue') && JSON.stringify(s.Resource).includes(`"${secretId}"`),
      );
    const publishes = (family: Family) =>
      policyStatementsOf(stack, roleId(stack, family)).some(
        (s) => [s.Action].flat().includes('sns:Publish') && JSON.stringify(s.Resource).includes(`"${topicId}"`),
      );
    for (const family of stack.functions.keys()) {
      expect(reads(family, signingId), `${family} reads the signing key`).toBe(family === 'token');
      expect(publishes(family), `${family} publishes`).toBe(family === 'token');
      const verifies = family !== 'service' && family !== 'fanout';
      // No other secret: the JWKS is a table item, read with the table grant every verifier has;
      // the readers of the webhook subscriptions read the key of their secrets at rest, and so do the
      // writer (folders) and the reader (token) of the identity providers' client secrets.
      const secretReads = policyStatementsOf(stack, roleId(stack, family)).filter((s) => [s.Action].flat().some((a) => a.startsWith('secretsmanager:')));
      expect(secretReads.length, `${family} reads secrets`).toBe(family === 'token' || family === 'webhooks' || family === 'fanout' || family === 'folders' ? 1 : 0);
      const env = JSON.stringify(stack.resolve((stack.functions.get(family)!.function.node.defaultChild as CfnElement & { environment: unknown }).environment));
      // The setting is in the environment every family shares (service has it and verifies nothing).
      expect(env.includes('"GATEHOUSE_PUBLIC_KEYS":"table"'), `${family} reads the JWKS from the table`).toBe(family !== 'fanout');
      // Its code goes live only once the key manager has published the JWKS.
      const fnId = logicalId(stack, stack.functions.get(family)!.function.node.defaultChild as CfnElement);
      expect(template.toJSON().Resources[fnId].DependsOn?.includes(keysId) === true, `${family} waits for the keys`).toBe(verifies);
    }
    // Besides token, only the key generator (which keeps an existing pair) reads the private key.
    const readers = Object.values(resourcesOf(template, 'AWS::IAM::Policy')).filter((p) =>
      (p.Properties.PolicyDocument as { Statement: { Action: string | string[]; Resource: unknown }[] }).Statement.some(
        (s) => [s.Action].flat().includes('secretsmanager:GetSecretValue') && JSON.stringify(s.Resource).includes(`"${signingId}"`),
      ),
    );
    expect(readers.map((p) => JSON.stringify(p.Properties.Roles)).sort()).toEqual(
      [
        JSON.stringify([{ Ref: roleId(stack, 'token') }]),
        JSON.stringify([{ Ref: logicalId(stack, stack.keys.generator.role.node.defaultChild as CfnElement) }]),
      ].sort(),
    );
  });

  it('generates the signing key at deploy time, without key material in the template', () => {
    const signingId = logicalId(stack, stack.keys.signingKey.node.defaultChild as CfnElement);
    const tableId = logicalId(stack, stack.table.table.node.defaultChild as CfnElement);
    // The signing key and the key of the webhook secrets at rest (test/infra/webhooks.test.ts).
    template.resourceCountIs('AWS::SecretsManager::Secret', 2);
    template.hasResourceProperties('Custom::GatehouseSigningKey', {
      ServiceToken: { 'Fn::GetAtt': [logicalId(stack, stack.keys.generator.function.node.defaultChild as CfnElement), 'Arn'] },
      ServiceTimeout: '300',
      SigningKeySecretId: { Ref: signingId },
      PublicKeysTable: { Ref: tableId },
    });
    for (const secret of Object.values(resourcesOf(template, 'AWS::SecretsManager::Secret'))) {
      expect(secret.Properties.SecretString).toBeUndefined();
    }
    const json = JSON.stringify(template.toJSON());
    expect(json).not.toMatch(/"(kty|crv|d)":/);
    expect(json).not.toContain('PRIVATE KEY');
    // The APIs start serving only once the key exists.
    for (const stage of Object.values(resourcesOf(template, 'AWS::ApiGatewayV2::Stage'))) {
      expect(stage.DependsOn ?? []).toEqual(expect.arrayContaining([expect.stringMatching(/^SigningKeysGenerate/)]));
    }
  });

  it('has an encrypted, TLS-only topic for one-time passwords', () => {
    template.hasResourceProperties('AWS::SNS::Topic', { KmsMasterKeyId: Match.anyValue() });
    template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
        ]),
      },
    });
  });

  it('outputs the API URLs, table name and topic ARN', () => {
    const outputs = template.toJSON().Outputs as Record<string, unknown>;
    expect(Object.keys(outputs)).toEqual(expect.arrayContaining(['HttpApiUrl', 'WebSocketUrl', 'TableName', 'NotifyTopicArn']));
  });
});

describe('context', () => {
  it('opens CORS to the configured origins, in API Gateway and in the functions', () => {
    const { stacks, templates } = buildTemplates({
      'gatehouse:regions': { EU: 'eu-west-1' },
      'gatehouse:corsOrigins': 'https://console.example.com, https://admin.example.com',
    });
    const template = templates.get(stacks[0]!.stackName)!;
    template.hasResourceProperties('AWS::ApiGatewayV2::Api', {
      ProtocolType: 'HTTP',
      CorsConfiguration: Match.objectLike({
        AllowOrigins: ['https://console.example.com', 'https://admin.example.com'],
        // A page may send an Idempotency-Key and read where, when to retry and the limits left.
        AllowHeaders: ['authorization', 'content-type', 'idempotency-key'],
        ExposeHeaders: ['location', 'retry-after', 'ratelimit', 'ratelimit-policy'],
      }),
    });
    const fn = resourcesOf(template, 'AWS::Lambda::Function')[
      stacks[0]!.resolve(stacks[0]!.getLogicalId(stacks[0]!.functions.get('people')!.function.node.defaultChild as CfnElement)) as string
    ]!;
    expect((fn.Properties.Environment as { Variables: Record<string, string> }).Variables.GATEHOUSE_CORS_ORIGINS).toBe(
      'https://console.example.com,https://admin.example.com',
    );
  });

  it('turns deletion protection off only when asked', () => {
    const { stacks, templates } = buildTemplates({
      'gatehouse:regions': { CA: 'ca-central-1' },
      'gatehouse:deletionProtection': 'false',
    });
    templates.get(stacks[0]!.stackName)!.hasResource('AWS::DynamoDB::Table', {
      DeletionPolicy: 'Retain',
      Properties: Match.objectLike({ DeletionProtectionEnabled: false }),
    });
  });

  it('maps custom domain names when configured', () => {
    const { stacks, templates } = buildTemplates({
      'gatehouse:regions': { EU: 'eu-west-1' },
      'gatehouse:customDomains': {
        EU: {
          certificateArn: 'arn:aws:acm:eu-west-1:111122223333:certificate/00000000-0000-0000-0000-000000000000',
          httpDomainName: 'eu.api.example.com',
          websocketDomainName: 'eu.events.example.com',
        },
      },
    });
    const template = templates.get(stacks[0]!.stackName)!;
    template.resourceCountIs('AWS::ApiGatewayV2::DomainName', 2);
    template.resourceCountIs('AWS::ApiGatewayV2::ApiMapping', 2);
    template.hasOutput('HttpApiUrl', { Value: 'https://eu.api.example.com/' });
    template.hasOutput('WebSocketUrl', { Value: 'wss://eu.events.example.com' });
    // The API's own URL: named in the OpenAPI document, refused as a webhook target.
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ GATEHOUSE_PUBLIC_URL: 'https://eu.api.example.com' }) },
    });
  });

  it("leaves the AWS SDK to the Lambda runtime's copy in every function when gatehouse:bundleAwsSdk is false", () => {
    const stacks = buildApp(newApp({ 'gatehouse:regions': { EU: 'eu-west-1' }, 'gatehouse:bundleAwsSdk': 'false' }));
    const fns = [...stacks[0]!.functions.values(), stacks[0]!.keys.generator];
    expect(fns.length).toBeGreaterThan(3);
    for (const fn of fns) expect(fn.bundling.externalModules).toEqual(['@aws-sdk/*']);
  });

  it('rejects a region that is not an AWS region code', () => {
    expect(() => buildTemplates({ 'gatehouse:regions': { US: 'Virginia' } })).toThrow(/gatehouse:regions/);
  });
});
