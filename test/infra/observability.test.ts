/**
 * Alarms, dashboard and tenant usage queries in every regional stack: each alarm notifies the
 * one topic of the `AlarmTopicArn` output, on ALARM and on OK; thresholds follow the defaults or
 * the `gatehouse:alarmThresholds` context.
 */
import type { CfnElement } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { DEFAULT_ALARM_THRESHOLDS } from '../../infra/alarm-thresholds.ts';
import type { GatehouseStack } from '../../infra/app.ts';
import { METRICS_NAMESPACE, TABLE_OPERATIONS } from '../../infra/observability.ts';
import type { Family } from '../../shared/model/collections.ts';
import { httpFamilies } from '../../shared/routes.ts';
import { buildTemplates, cdkJsonContext, resourcesOf } from './app-fixture.ts';

const built = buildTemplates();
const regions = Object.values(cdkJsonContext()['gatehouse:regions'] as Record<string, string>);
const t = DEFAULT_ALARM_THRESHOLDS;

type Props = Record<string, unknown>;
type Query = { Id: string; Expression?: string; Period?: number; ReturnData?: boolean; MetricStat?: { Metric: { MetricName: string; Namespace: string; Dimensions?: { Name: string; Value: unknown }[] }; Stat: string } };

const idOf = (stack: GatehouseStack, element: CfnElement): string => stack.resolve(stack.getLogicalId(element)) as string;

/** Alarm properties by alarm name (names are `<stack>-<what>`). */
function alarmsOf(stack: GatehouseStack, template = built.templates.get(stack.stackName)!): Map<string, Props> {
  return new Map(
    // The webhook dead-letter alarm (infra/webhooks.ts) has no name: its logical id stands in.
    Object.entries(resourcesOf(template, 'AWS::CloudWatch::Alarm')).map(([id, a]) => [
      ((a.Properties.AlarmName as string | undefined) ?? id).replace(`${stack.stackName}-`, ''),
      a.Properties,
    ]),
  );
}

function get(alarms: Map<string, Props>, name: string): Props {
  const a = alarms.get(name);
  if (!a) throw new Error(`no alarm ${name}; have ${[...alarms.keys()].join(', ')}`);
  return a;
}

describe('observability in every region', () => {
  it('builds one stack per region of the context', () => {
    expect(built.stacks.map((s) => s.region).sort()).toEqual([...regions].sort());
  });
});

describe.each(built.stacks.map((s) => [s.region, s] as const))('observability in %s', (_region, stack) => {
  const template = built.templates.get(stack.stackName)!;
  const alarms = alarmsOf(stack);
  const topicId = idOf(stack, stack.observability.topic.node.defaultChild as CfnElement);
  const fnId = (family: Family) => idOf(stack, stack.functions.get(family)!.function.node.defaultChild as CfnElement);
  const families = [...stack.functions.keys()];

  it('sends every alarm of the stack, the webhook dead-letter alarm included, to the topic of the AlarmTopicArn output', () => {
    template.hasOutput('AlarmTopicArn', { Value: { Ref: topicId } });
    expect(alarms.size).toBe(stack.observability.alarms.length);
    for (const [name, a] of alarms) {
      expect(a.AlarmActions, name).toEqual([{ Ref: topicId }]);
      expect(a.OKActions, name).toEqual([{ Ref: topicId }]);
      expect(a.TreatMissingData, name).toBe('notBreaching');
      if (a.AlarmName) expect(a.AlarmDescription, name).toMatch(/Operating Gatehouse/);
    }
    const webhookDlq = idOf(stack, stack.webhooks.deadLetterAlarm.node.defaultChild as CfnElement);
    expect(resourcesOf(template, 'AWS::CloudWatch::Alarm')[webhookDlq]!.Properties.AlarmActions).toEqual([{ Ref: topicId }]);
  });

  it('lets only TLS and this account\'s CloudWatch alarms publish to the topic', () => {
    const policies = Object.values(resourcesOf(template, 'AWS::SNS::TopicPolicy')).filter((p) =>
      JSON.stringify(p.Properties.Topics).includes(`"${topicId}"`),
    );
    expect(policies).toHaveLength(1);
    const statements = (policies[0]!.Properties.PolicyDocument as { Statement: Props[] }).Statement;
    expect(statements).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
        expect.objectContaining({
          Effect: 'Allow',
          Action: 'sns:Publish',
          Principal: { Service: 'cloudwatch.amazonaws.com' },
          Condition: expect.objectContaining({ StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } } }),
        }),
      ]),
    );
  });

  it('alarms on the HTTP API 5xx rate, guarded by a minimum of requests, and on its p99 latency', () => {
    const rate = get(alarms, 'HttpApi5xxRate');
    const queries = rate.Metrics as Query[];
    const expr = queries.find((q) => q.ReturnData)!;
    expect(expr.Expression).toBe(`IF(requests >= ${t.httpApiMinRequests}, 100 * errors / requests, 0)`);
    expect(queries.find((q) => q.Id === 'errors')!.MetricStat!.Metric).toMatchObject({ Namespace: 'AWS/ApiGateway', MetricName: '5xx' });
    expect(queries.find((q) => q.Id === 'requests')!.MetricStat!.Metric).toMatchObject({ Namespace: 'AWS/ApiGateway', MetricName: 'Count' });
    expect(rate).toMatchObject({ Threshold: t.httpApi5xxPercent, EvaluationPeriods: 3, DatapointsToAlarm: 2 });
    const httpApiId = idOf(stack, stack.httpApi.api.node.defaultChild as CfnElement);
    expect(get(alarms, 'HttpApiLatencyP99')).toMatchObject({
      Namespace: 'AWS/ApiGateway',
      MetricName: 'Latency',
      ExtendedStatistic: 'p99',
      Dimensions: [{ Name: 'ApiId', Value: { Ref: httpApiId } }],
      Threshold: t.httpApiP99LatencyMs,
    });
  });

  it('alarms per family on Lambda errors, throttles and a p99 duration near the function\'s timeout', () => {
    const functions = resourcesOf(template, 'AWS::Lambda::Function');
    for (const family of families) {
      const dims = [{ Name: 'FunctionName', Value: { Ref: fnId(family) } }];
      expect(get(alarms, `${family}-Errors`)).toMatchObject({ Namespace: 'AWS/Lambda', MetricName: 'Errors', Statistic: 'Sum', Dimensions: dims, Threshold: t.functionErrors });
      expect(get(alarms, `${family}-Throttles`)).toMatchObject({ Namespace: 'AWS/Lambda', MetricName: 'Throttles', Dimensions: dims, Threshold: t.functionThrottles });
      const timeoutMs = (functions[fnId(family)]!.Properties.Timeout as number) * 1000;
      expect(get(alarms, `${family}-Duration`)).toMatchObject({
        Namespace: 'AWS/Lambda',
        MetricName: 'Duration',
        ExtendedStatistic: 'p99',
        Dimensions: dims,
        Threshold: Math.round((timeoutMs * t.functionDurationPercentOfTimeout) / 100),
      });
    }
    // The token function's 15 s timeout, the events function's 29 s.
    expect(get(alarms, 'token-Duration').Threshold).toBe(12_000);
    expect(get(alarms, 'events-Duration').Threshold).toBe(23_200);
  });

  it('alarms per HTTP family on its 5xx answers, summed over its operations by a Metrics Insights query', () => {
    for (const family of httpFamilies()) {
      const a = get(alarms, `${family}-5xx`);
      const [q] = a.Metrics as Query[];
      expect(q!.Expression).toBe(`SELECT SUM(Errors) FROM SCHEMA("${METRICS_NAMESPACE}", Operation, service) WHERE service = '${family}'`);
      expect(q!.Period).toBe(300);
      expect(a.Threshold).toBe(t.familyServerErrors);
    }
    for (const family of ['websocket', 'fanout', 'mqttauth']) expect(alarms.has(`${family}-5xx`)).toBe(false);
    expect(new Set(stack.observability.familyErrorAlarms.keys())).toEqual(new Set(families));
  });

  it('alarms on DynamoDB throttled requests and system errors over every operation Gatehouse sends', () => {
    const tableId = idOf(stack, stack.table.table.node.defaultChild as CfnElement);
    for (const [name, metricName, threshold] of [
      ['TableThrottles', 'ThrottledRequests', t.tableThrottledRequests],
      ['TableSystemErrors', 'SystemErrors', t.tableSystemErrors],
    ] as const) {
      const a = get(alarms, name);
      const queries = a.Metrics as Query[];
      const stats = queries.filter((q) => q.MetricStat);
      expect(stats.map((q) => q.MetricStat!.Metric.Dimensions!.find((d) => d.Name === 'Operation')!.Value).sort()).toEqual(
        [...TABLE_OPERATIONS].sort(),
      );
      for (const q of stats) {
        expect(q.MetricStat!.Metric).toMatchObject({ Namespace: 'AWS/DynamoDB', MetricName: metricName });
        expect(q.MetricStat!.Metric.Dimensions).toContainEqual({ Name: 'TableName', Value: { Ref: tableId } });
      }
      // Each term filled with 0: a missing operation does not blank the sum.
      expect(queries.find((q) => q.ReturnData)!.Expression).toBe(stats.map((q) => `FILL(${q.Id}, 0)`).join(' + '));
      expect(a.Threshold).toBe(threshold);
      expect(stats.length).toBeLessThanOrEqual(10); // CloudWatch's limit of metrics per alarm
    }
  });

  it('alarms on the fan-out iterator age and on every dead-letter queue', () => {
    expect(get(alarms, 'FanoutIteratorAge')).toMatchObject({
      Namespace: 'AWS/Lambda',
      MetricName: 'IteratorAge',
      Statistic: 'Maximum',
      Period: 60,
      EvaluationPeriods: 5,
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: fnId('fanout') } }],
      Threshold: t.fanoutIteratorAgeSeconds * 1000,
    });
    const depthAlarms = [...alarms.values()].filter((a) => a.MetricName === 'ApproximateNumberOfMessagesVisible');
    const queues = [stack.fanoutDeadLetters, stack.webhooks.deadLetters].map((q) => idOf(stack, q.node.defaultChild as CfnElement));
    expect(depthAlarms.map((a) => JSON.stringify(a.Dimensions)).sort()).toEqual(
      queues.map((q) => JSON.stringify([{ Name: 'QueueName', Value: { 'Fn::GetAtt': [q, 'QueueName'] } }])).sort(),
    );
    for (const a of depthAlarms) expect(a.Threshold).toBe(t.deadLetterMessages);
  });

  it('alarms on the failed-login rate of the token family, guarded by a minimum of attempts', () => {
    const a = get(alarms, 'FailedLoginRate');
    const queries = a.Metrics as Query[];
    expect(queries.find((q) => q.ReturnData)!.Expression).toBe(
      `IF(attempts >= ${t.failedLoginMinAttempts}, 100 * failures / attempts, 0)`,
    );
    for (const [id, metricName] of [['attempts', 'LoginAttempts'], ['failures', 'LoginFailures']]) {
      expect(queries.find((q) => q.Id === id)!.MetricStat).toEqual({
        Metric: { Namespace: METRICS_NAMESPACE, MetricName: metricName, Dimensions: [{ Name: 'service', Value: 'token' }] },
        Period: 300,
        Stat: 'Sum',
      });
    }
    expect(a.Threshold).toBe(t.failedLoginPercent);
  });

  it('has a dashboard named after the stack that shows every alarm and the per-family metrics', () => {
    template.resourceCountIs('AWS::CloudWatch::Dashboard', 1);
    const dashboard = Object.values(resourcesOf(template, 'AWS::CloudWatch::Dashboard'))[0]!.Properties;
    expect(dashboard.DashboardName).toBe(stack.stackName);
    const body = JSON.stringify(dashboard.DashboardBody);
    for (const alarm of stack.observability.alarms) {
      expect(body).toContain(`"${idOf(stack, alarm.node.defaultChild as CfnElement)}"`);
    }
    for (const metric of ['Requests', 'Errors', 'ConsumedCapacity']) {
      expect(body).toContain(`SELECT SUM(${metric}) FROM SCHEMA(\\\\\\"${METRICS_NAMESPACE}\\\\\\", Operation, service) GROUP BY service`);
    }
    for (const text of ['LoginFailures', 'IteratorAge', 'ThrottledRequests', 'ApproximateNumberOfMessagesVisible', 'MetricName=\\\\\\"Latency\\\\\\"']) {
      expect(body).toContain(text);
    }
    for (const family of families) expect(body).toContain(`"${fnId(family)}"`);
  });

  it('defines the tenant usage queries over the request log line of every HTTP family\'s log group', () => {
    const queries = Object.values(resourcesOf(template, 'AWS::Logs::QueryDefinition')).map((q) => q.Properties);
    expect(queries.map((q) => q.Name).sort()).toEqual(
      ['Tenant usage per day', 'Events published per tenant per day', 'Top tenants by cost', 'Errors per tenant and operation']
        .map((n) => `${stack.stackName}/${n}`)
        .sort(),
    );
    const logGroups = httpFamilies().map((f) => ({ Ref: idOf(stack, stack.functions.get(f)!.logGroup.node.defaultChild as CfnElement) }));
    for (const q of queries) {
      expect(q.LogGroupNames).toEqual(logGroups);
      const text = q.QueryString as string;
      expect(text).toMatch(/^filter message = 'request'\n\| filter ispresent\(instanceKey\)/);
    }
    const byName = new Map(queries.map((q) => [(q.Name as string).split('/')[1], q.QueryString as string]));
    expect(byName.get('Tenant usage per day')).toContain(
      'stats count(*) as requests, sum(status >= 500) as errors, sum(consumedCapacity) as capacityUnits by instanceKey, bin(1d) as day',
    );
    expect(byName.get('Events published per tenant per day')).toMatch(
      /filter family = 'events'\n\| filter operation = 'publish'\n\| filter status < 300\n\| stats count\(\*\) as eventsPublished by instanceKey, bin\(1d\) as day/,
    );
    expect(byName.get('Top tenants by cost')).toMatch(
      /stats count\(\*\) as requests, sum\(ms\) as computeMs, sum\(consumedCapacity\) as capacityUnits by instanceKey\n\| fields requests \* 0\.0000012 \+ computeMs \* 0\.000000006666[67] \+ capacityUnits \* 0\.000000625 as estimatedUsd\n\| sort estimatedUsd desc\n\| limit 25$/,
    );
  });
});

describe('alarm thresholds from the context', () => {
  it('overrides the named thresholds and keeps the others', () => {
    const { stacks, templates } = buildTemplates({
      'gatehouse:regions': { EU: 'eu-west-1' },
      'gatehouse:alarmThresholds': { functionErrors: 25, failedLoginPercent: '80', deadLetterMessages: 10 },
    });
    const alarms = alarmsOf(stacks[0]!, templates.get(stacks[0]!.stackName)!);
    expect(get(alarms, 'people-Errors').Threshold).toBe(25);
    expect(get(alarms, 'FailedLoginRate').Threshold).toBe(80);
    expect(get(alarms, 'fanout-DeadLetters').Threshold).toBe(10);
    expect(get(alarms, 'people-Throttles').Threshold).toBe(t.functionThrottles);
    const webhookDlq = idOf(stacks[0]!, stacks[0]!.webhooks.deadLetterAlarm.node.defaultChild as CfnElement);
    expect(get(alarms, webhookDlq).Threshold).toBe(10);
  });

  it('rejects an unknown threshold, a percentage over 100 and a value that is not a positive number', () => {
    const build = (v: unknown) => () => buildTemplates({ 'gatehouse:regions': { EU: 'eu-west-1' }, 'gatehouse:alarmThresholds': v });
    expect(build({ functionErorrs: 3 })).toThrow(/gatehouse:alarmThresholds: unknown threshold "functionErorrs"/);
    expect(build({ httpApi5xxPercent: 150 })).toThrow(/gatehouse:alarmThresholds: httpApi5xxPercent is a percentage/);
    expect(build({ functionErrors: 0 })).toThrow(/gatehouse:alarmThresholds: functionErrors must be a positive number/);
    expect(build({ functionErrors: 'many' })).toThrow(/functionErrors must be a positive number/);
  });
});
