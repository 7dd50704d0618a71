/**
 * What an on-call engineer watches in one region: the alarms (all notifying one SNS topic, the
 * `AlarmTopicArn` output), the dashboard, and the Logs Insights query definitions that answer
 * "how much did this tenant use".
 *
 * Two sources of numbers:
 *
 * - AWS's own metrics: the HTTP API, each function, the table, the queues.
 * - The functions' embedded metrics (Powertools Metrics, EMF) in the `Gatehouse` namespace, with
 *   dimensions `service` (the family) and `Operation` (the route table's operation name):
 *   `Requests`, `Errors` (5xx answers), `Latency` (ms), `ConsumedCapacity`; the token family also
 *   emits `LoginAttempts` and `LoginFailures` with `service` = `token` alone. A family's total is
 *   a Metrics Insights query over its operations, so adding a route needs no change here.
 *
 * The tenant is never a metric dimension (one custom metric per tenant would cost $0.30 a month
 * each): it is the `instanceKey` field of every request log line, which the query definitions
 * read.
 */
import { ArnFormat, CfnOutput, Duration, Stack } from 'aws-cdk-lib';
import type { HttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import {
  Alarm,
  AlarmStatusWidget,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  MathExpression,
  Metric,
  TextWidget,
  TreatMissingData,
  type IMetric,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { Operation, type Table } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { CfnQueryDefinition } from 'aws-cdk-lib/aws-logs';
import { Topic } from 'aws-cdk-lib/aws-sns';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { Family } from '#shared/model/collections.ts';
import {
  DYNAMODB_PER_MILLION_WRITE_REQUEST_UNITS,
  HTTP_API_PER_MILLION_REQUESTS,
  LAMBDA_ARM64_PER_GB_SECOND,
  LAMBDA_PER_MILLION_REQUESTS,
} from './prices.ts';
import { alarmThresholds, type AlarmThresholds } from './alarm-thresholds.ts';
import type { GatehouseFunction } from './gatehouse-function.ts';
import { acknowledge } from './nag.ts';
import { DEFAULT_MEMORY_MB } from './sizing.ts';

/** The namespace of the functions' embedded metrics. */
export const METRICS_NAMESPACE = 'Gatehouse';

/** The operation (route table) that publishes an event: `POST …/eventmessagesink` of the events family. */
const PUBLISH_OPERATION = { family: 'events', operation: 'publish' } as const;

/** The DynamoDB operations Gatehouse sends (no Scan); CloudWatch reports throttles and system errors per operation. */
export const TABLE_OPERATIONS: readonly Operation[] = Object.freeze([
  Operation.GET_ITEM,
  Operation.BATCH_GET_ITEM,
  Operation.QUERY,
  Operation.PUT_ITEM,
  Operation.UPDATE_ITEM,
  Operation.DELETE_ITEM,
  Operation.BATCH_WRITE_ITEM,
  Operation.TRANSACT_WRITE_ITEMS,
]);

const PERIOD = Duration.minutes(5);

export interface GatehouseObservabilityProps {
  /**
   * Alarm thresholds; each one left out keeps its default (infra/alarm-thresholds.ts).
   * @default - DEFAULT_ALARM_THRESHOLDS
   */
  readonly thresholds?: Partial<AlarmThresholds>;
  /** Every family's function. */
  readonly functions: ReadonlyMap<Family, GatehouseFunction>;
  /** The families serving the HTTP API: they write the request log line and the embedded metrics. */
  readonly httpFamilies: readonly Family[];
  readonly httpApi: HttpApi;
  readonly table: Table;
  /** The family reading the table stream (its iterator age is alarmed on). */
  readonly streamConsumer: Family;
  /** Every dead-letter queue, by a short name (`fanout`, `webhooks`). */
  readonly deadLetterQueues: ReadonlyMap<string, IQueue>;
  /**
   * Alarms made elsewhere, by the name of their dead-letter queue: they notify the topic too and
   * no second alarm is made for that queue.
   * @default - none
   */
  readonly deadLetterAlarms?: ReadonlyMap<string, Alarm>;
}

export class GatehouseObservability extends Construct {
  /** Every alarm notifies this topic (on ALARM and on OK). */
  readonly topic: Topic;
  /** Every alarm of the stack. */
  readonly alarms: readonly Alarm[];
  /** The alarms that say a family's code is failing: what rolls back its deployment. */
  readonly familyErrorAlarms: ReadonlyMap<Family, readonly Alarm[]>;
  readonly dashboard: Dashboard;
  readonly queries: readonly CfnQueryDefinition[];
  readonly thresholds: AlarmThresholds;

  private readonly action: SnsAction;
  private readonly all: Alarm[] = [];

  constructor(scope: Construct, id: string, props: GatehouseObservabilityProps) {
    super(scope, id);
    const stack = Stack.of(this);
    const t = (this.thresholds = alarmThresholds(props.thresholds));

    // Alarm notifications carry alarm names, states and metric values, never customer data.
    // CloudWatch cannot publish to a topic encrypted with the AWS managed SNS key (its key policy
    // cannot be changed to let CloudWatch use it), and a customer managed key costs a dollar a
    // month per region for no data worth protecting.
    this.topic = new Topic(this, 'AlarmTopic', { displayName: `Gatehouse alarms (${stack.stackName})`, enforceSSL: true });
    acknowledge(
      this.topic,
      'AwsSolutions-SNS2',
      'Alarm notifications only (alarm name, state, metric values; no customer data). CloudWatch cannot publish to a ' +
        'topic encrypted with the AWS managed SNS key, and a customer managed key would protect nothing here.',
    );
    // The topic policy that enforceSSL creates replaces SNS's default one: let this account's
    // alarms publish explicitly.
    this.topic.addToResourcePolicy(
      new PolicyStatement({
        actions: ['sns:Publish'],
        principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
        resources: [this.topic.topicArn],
        conditions: {
          StringEquals: { 'aws:SourceAccount': stack.account },
          ArnLike: { 'aws:SourceArn': stack.formatArn({ service: 'cloudwatch', resource: 'alarm', resourceName: '*', arnFormat: ArnFormat.COLON_RESOURCE_NAME }) },
        },
      }),
    );
    this.action = new SnsAction(this.topic);

    // --- HTTP API
    const api = props.httpApi;
    const apiRequests = api.metricCount({ period: PERIOD, statistic: 'Sum' });
    const api5xx = api.metricServerError({ period: PERIOD, statistic: 'Sum' });
    this.alarm('HttpApi5xxRate', {
      description: `More than ${t.httpApi5xxPercent}% of HTTP API requests answered 5xx (periods with at least ${t.httpApiMinRequests} requests).`,
      metric: new MathExpression({
        expression: `IF(requests >= ${t.httpApiMinRequests}, 100 * errors / requests, 0)`,
        usingMetrics: { requests: apiRequests, errors: api5xx },
        period: PERIOD,
        label: 'HTTP API 5xx %',
      }),
      threshold: t.httpApi5xxPercent,
      evaluationPeriods: 3,
      datapointsToAlarm: 2,
    });
    this.alarm('HttpApiLatencyP99', {
      description: `HTTP API p99 latency above ${t.httpApiP99LatencyMs} ms for 15 minutes.`,
      metric: api.metricLatency({ period: PERIOD, statistic: 'p99' }),
      threshold: t.httpApiP99LatencyMs,
      evaluationPeriods: 3,
    });

    // --- Per family
    const http = new Set(props.httpFamilies);
    const errorAlarms = new Map<Family, Alarm[]>();
    for (const [family, fn] of props.functions) {
      const f = fn.function;
      const timeoutMs = (f.timeout ?? Duration.seconds(3)).toMilliseconds();
      const failures = this.alarm(`${family}-Errors`, {
        description: `The ${family} function failed ${t.functionErrors} or more invocations in 5 minutes (crash, timeout or failed start).`,
        metric: f.metricErrors({ period: PERIOD, statistic: 'Sum' }),
        threshold: t.functionErrors,
      });
      this.alarm(`${family}-Throttles`, {
        description: `The ${family} function was throttled ${t.functionThrottles} or more times in 5 minutes (account or reserved concurrency reached).`,
        metric: f.metricThrottles({ period: PERIOD, statistic: 'Sum' }),
        threshold: t.functionThrottles,
      });
      this.alarm(`${family}-Duration`, {
        description: `The ${family} function's p99 duration stayed above ${t.functionDurationPercentOfTimeout}% of its ${timeoutMs / 1000} s timeout for 15 minutes.`,
        metric: f.metricDuration({ period: PERIOD, statistic: 'p99' }),
        threshold: Math.round((timeoutMs * t.functionDurationPercentOfTimeout) / 100),
        evaluationPeriods: 3,
      });
      const alarms = [failures];
      if (http.has(family)) {
        alarms.push(
          this.alarm(`${family}-5xx`, {
            description: `The ${family} operations answered ${t.familyServerErrors} or more 5xx in 5 minutes (embedded metric Errors).`,
            metric: familyTotal('Errors', family, 'SUM'),
            threshold: t.familyServerErrors,
          }),
        );
      }
      errorAlarms.set(family, alarms);
    }
    this.familyErrorAlarms = errorAlarms;

    // --- Table
    const table = props.table;
    const tableThrottles = perOperationTotal(table, 'ThrottledRequests');
    const tableErrors = perOperationTotal(table, 'SystemErrors');
    this.alarm('TableThrottles', {
      description: `DynamoDB throttled ${t.tableThrottledRequests} or more requests in 5 minutes.`,
      metric: tableThrottles,
      threshold: t.tableThrottledRequests,
    });
    this.alarm('TableSystemErrors', {
      description: `DynamoDB answered ${t.tableSystemErrors} or more requests with a server error in 5 minutes.`,
      metric: tableErrors,
      threshold: t.tableSystemErrors,
    });

    // --- Live events and dead letters
    const consumer = props.functions.get(props.streamConsumer);
    if (!consumer) throw new Error(`No function for the stream consumer ${props.streamConsumer}`);
    const iteratorAge = consumer.function.metric('IteratorAge', { period: Duration.minutes(1), statistic: 'Maximum' });
    this.alarm('FanoutIteratorAge', {
      description: `The fan-out is more than ${t.fanoutIteratorAgeSeconds} s behind the table stream, every minute for 5 minutes.`,
      metric: iteratorAge,
      threshold: t.fanoutIteratorAgeSeconds * 1000,
      evaluationPeriods: 5,
    });
    const existing = props.deadLetterAlarms ?? new Map<string, Alarm>();
    for (const [name, queue] of props.deadLetterQueues) {
      const made = existing.get(name);
      if (made) {
        this.route(made);
        continue;
      }
      this.alarm(`${name}-DeadLetters`, {
        description: `${t.deadLetterMessages} or more messages wait in the ${name} dead-letter queue.`,
        metric: queue.metricApproximateNumberOfMessagesVisible({ period: PERIOD, statistic: 'Maximum' }),
        threshold: t.deadLetterMessages,
      });
    }

    // --- Logins (a brute-force signal)
    const logins = loginMetrics();
    this.alarm('FailedLoginRate', {
      description: `More than ${t.failedLoginPercent}% of logins failed (periods with at least ${t.failedLoginMinAttempts} attempts): a password-guessing signal.`,
      metric: new MathExpression({
        expression: `IF(attempts >= ${t.failedLoginMinAttempts}, 100 * failures / attempts, 0)`,
        usingMetrics: { attempts: logins.attempts, failures: logins.failures },
        period: PERIOD,
        label: 'Failed logins %',
      }),
      threshold: t.failedLoginPercent,
      evaluationPeriods: 3,
      datapointsToAlarm: 2,
    });
    this.alarms = this.all;

    this.dashboard = this.buildDashboard(props, { apiRequests, api5xx, tableThrottles, tableErrors, iteratorAge, logins });
    this.queries = this.buildQueries(props);

    new CfnOutput(stack, 'AlarmTopicArn', {
      value: this.topic.topicArn,
      description: 'Every alarm of the stack notifies this topic; subscribe the on-call endpoints to it',
    });
    new CfnOutput(stack, 'DashboardName', { value: this.dashboard.dashboardName, description: 'CloudWatch dashboard of the stack' });
  }

  private route(alarm: Alarm): Alarm {
    alarm.addAlarmAction(this.action);
    alarm.addOkAction(this.action);
    this.all.push(alarm);
    return alarm;
  }

  private alarm(
    id: string,
    p: { description: string; metric: IMetric; threshold: number; evaluationPeriods?: number; datapointsToAlarm?: number },
  ): Alarm {
    const stack = Stack.of(this);
    return this.route(
      new Alarm(this, id, {
        alarmName: `${stack.stackName}-${id}`,
        alarmDescription: `${p.description} See docs/operations.md "Operating Gatehouse".`,
        metric: p.metric,
        threshold: p.threshold,
        evaluationPeriods: p.evaluationPeriods ?? 1,
        datapointsToAlarm: p.datapointsToAlarm,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        // No traffic is no failure.
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
    );
  }

  private buildDashboard(
    props: GatehouseObservabilityProps,
    m: {
      apiRequests: IMetric;
      api5xx: IMetric;
      tableThrottles: IMetric;
      tableErrors: IMetric;
      iteratorAge: IMetric;
      logins: { attempts: IMetric; failures: IMetric };
    },
  ): Dashboard {
    const stack = Stack.of(this);
    const fns = [...props.functions];
    const perFunction = (metric: (f: GatehouseFunction) => IMetric) => fns.map(([family, f]) => withLabel(metric(f), family));
    const api = props.httpApi;
    const dashboard = new Dashboard(this, 'Dashboard', {
      dashboardName: stack.stackName,
      defaultInterval: Duration.hours(3),
    });
    dashboard.addWidgets(
      new TextWidget({
        markdown:
          `# Gatehouse ${stack.stackName}\n` +
          'Alarms notify the `AlarmTopicArn` output; what to do for each is in docs/operations.md "Operating Gatehouse". ' +
          'Per-tenant usage: Logs Insights → Queries → `' + stack.stackName + '/`.',
        width: 24,
        height: 2,
      }),
      new AlarmStatusWidget({ title: 'Alarms', alarms: [...this.all], width: 24, height: 6 }),
    );
    dashboard.addWidgets(
      new GraphWidget({
        title: 'HTTP API requests and errors',
        left: [withLabel(m.apiRequests, 'requests')],
        right: [withLabel(m.api5xx, '5xx'), withLabel(api.metricClientError({ period: PERIOD, statistic: 'Sum' }), '4xx')],
        width: 12,
      }),
      new GraphWidget({
        title: 'HTTP API latency (ms)',
        left: ['p50', 'p90', 'p99'].map((s) => withLabel(api.metricLatency({ period: PERIOD, statistic: s }), s)),
        width: 12,
      }),
    );
    dashboard.addWidgets(
      new GraphWidget({ title: 'Requests per family', left: [familyTotals('Requests', 'SUM')], width: 8 }),
      new GraphWidget({ title: '5xx answers per family', left: [familyTotals('Errors', 'SUM')], width: 8 }),
      new GraphWidget({ title: 'DynamoDB capacity units per family', left: [familyTotals('ConsumedCapacity', 'SUM')], width: 8 }),
    );
    dashboard.addWidgets(
      new GraphWidget({
        title: 'p99 latency per operation (ms)',
        left: [
          new MathExpression({
            expression: `SEARCH('{${METRICS_NAMESPACE},Operation,service} MetricName="Latency"', 'p99', 300)`,
            period: PERIOD,
            label: '',
          }),
        ],
        width: 12,
      }),
      new GraphWidget({
        title: 'Logins',
        left: [withLabel(m.logins.attempts, 'attempts'), withLabel(m.logins.failures, 'failures')],
        width: 12,
      }),
    );
    dashboard.addWidgets(
      new GraphWidget({ title: 'Function errors', left: perFunction((f) => f.function.metricErrors({ period: PERIOD, statistic: 'Sum' })), width: 8 }),
      new GraphWidget({ title: 'Function throttles', left: perFunction((f) => f.function.metricThrottles({ period: PERIOD, statistic: 'Sum' })), width: 8 }),
      new GraphWidget({ title: 'Function duration p99 (ms)', left: perFunction((f) => f.function.metricDuration({ period: PERIOD, statistic: 'p99' })), width: 8 }),
    );
    dashboard.addWidgets(
      new GraphWidget({
        title: 'DynamoDB consumed capacity',
        left: [
          withLabel(props.table.metricConsumedReadCapacityUnits({ period: PERIOD, statistic: 'Sum' }), 'read'),
          withLabel(props.table.metricConsumedWriteCapacityUnits({ period: PERIOD, statistic: 'Sum' }), 'write'),
        ],
        width: 8,
      }),
      // Two graphs: both expressions name their per-operation metrics alike.
      new GraphWidget({ title: 'DynamoDB throttled requests', left: [withLabel(m.tableThrottles, 'throttled')], width: 4 }),
      new GraphWidget({ title: 'DynamoDB system errors', left: [withLabel(m.tableErrors, 'system errors')], width: 4 }),
      new GraphWidget({
        title: 'Fan-out iterator age (ms) and dead letters',
        left: [withLabel(m.iteratorAge, 'iterator age')],
        right: [...props.deadLetterQueues].map(([name, q]) =>
          withLabel(q.metricApproximateNumberOfMessagesVisible({ period: PERIOD, statistic: 'Maximum' }), `${name} dead letters`),
        ),
        width: 8,
      }),
    );
    return dashboard;
  }

  /**
   * Logs Insights over the request log line (`message` = `request`, with `family`, `operation`,
   * `instanceKey`, `status`, `ms`, `consumedCapacity`) of every HTTP family's log group. These
   * are the billing-grade per-tenant figures.
   */
  private buildQueries(props: GatehouseObservabilityProps): CfnQueryDefinition[] {
    const stack = Stack.of(this);
    const logGroupNames = props.httpFamilies.map((family) => {
      const fn = props.functions.get(family);
      if (!fn) throw new Error(`No function for the HTTP family ${family}`);
      return fn.logGroup.logGroupName;
    });
    const tenantRequests = ["filter message = 'request'", 'filter ispresent(instanceKey)'];
    // Commands run in the order given (aws-logs' QueryString puts `fields` before `stats`).
    const make = (id: string, name: string, commands: readonly string[]) =>
      new CfnQueryDefinition(this, id, { name: `${stack.stackName}/${name}`, queryString: commands.join('\n| '), logGroupNames });
    return [
      make('TenantUsageQuery', 'Tenant usage per day', [
        ...tenantRequests,
        'stats count(*) as requests, sum(status >= 500) as errors, sum(consumedCapacity) as capacityUnits by instanceKey, bin(1d) as day',
        'sort day desc, requests desc',
        'limit 1000',
      ]),
      make('EventsPublishedQuery', 'Events published per tenant per day', [
        ...tenantRequests,
        `filter family = '${PUBLISH_OPERATION.family}'`,
        `filter operation = '${PUBLISH_OPERATION.operation}'`,
        'filter status < 300',
        'stats count(*) as eventsPublished by instanceKey, bin(1d) as day',
        'sort day desc, eventsPublished desc',
        'limit 1000',
      ]),
      make('TopTenantsQuery', 'Top tenants by cost', [
        ...tenantRequests,
        'stats count(*) as requests, sum(ms) as computeMs, sum(consumedCapacity) as capacityUnits by instanceKey',
        `fields ${costExpression()} as estimatedUsd`,
        'sort estimatedUsd desc',
        'limit 25',
      ]),
      make('TenantErrorsQuery', 'Errors per tenant and operation', [
        ...tenantRequests,
        'filter status >= 500',
        'stats count(*) as errors, max(@timestamp) as last by instanceKey, family, operation',
        'sort errors desc',
        'limit 100',
      ]),
    ];
  }

}

/**
 * Estimated dollars of a tenant's requests, from the list prices of infra/prices.ts: HTTP API and
 * Lambda requests, Lambda duration at the default memory (the token family's 1024 MB logins
 * cost twice this), and capacity units at the write price (an upper bound: reads cost a fifth).
 * Good for ranking tenants; the bill itself comes from Cost Explorer.
 */
function costExpression(): string {
  const perRequest = (HTTP_API_PER_MILLION_REQUESTS + LAMBDA_PER_MILLION_REQUESTS) / 1e6;
  const perMs = (DEFAULT_MEMORY_MB / 1024) * (LAMBDA_ARM64_PER_GB_SECOND / 1000);
  const perUnit = DYNAMODB_PER_MILLION_WRITE_REQUEST_UNITS / 1e6;
  // Plain decimals: no exponent notation in the query language.
  const decimal = (n: number) => n.toFixed(15).replace(/0+$/, '');
  return `requests * ${decimal(perRequest)} + computeMs * ${decimal(perMs)} + capacityUnits * ${decimal(perUnit)}`;
}


function withLabel(metric: IMetric, label: string): IMetric {
  return metric instanceof Metric || metric instanceof MathExpression ? metric.with({ label }) : metric;
}

/** One family's total of an embedded metric over all its operations (Metrics Insights). */
function familyTotal(metricName: string, family: Family, fn: 'SUM' | 'MAX'): MathExpression {
  return new MathExpression({
    expression: `SELECT ${fn}(${metricName}) FROM SCHEMA("${METRICS_NAMESPACE}", Operation, service) WHERE service = '${family}'`,
    period: PERIOD,
    label: `${family} ${metricName}`,
  });
}

/** An embedded metric summed per family, one line each (Metrics Insights, graphs only). */
function familyTotals(metricName: string, fn: 'SUM' | 'MAX'): MathExpression {
  return new MathExpression({
    expression: `SELECT ${fn}(${metricName}) FROM SCHEMA("${METRICS_NAMESPACE}", Operation, service) GROUP BY service`,
    period: PERIOD,
    label: '',
  });
}

/**
 * A table metric summed over the operations Gatehouse sends. DynamoDB publishes these per
 * operation and only for periods where something happened, so each term is filled with 0: a
 * plain `a + b` has no value wherever one operation had no throttles.
 */
function perOperationTotal(table: Table, metricName: 'ThrottledRequests' | 'SystemErrors'): MathExpression {
  const usingMetrics = Object.fromEntries(
    TABLE_OPERATIONS.map((op) => [
      op.toLowerCase(),
      new Metric({
        namespace: 'AWS/DynamoDB',
        metricName,
        dimensionsMap: { TableName: table.tableName, Operation: op },
        period: PERIOD,
        statistic: 'Sum',
      }),
    ]),
  );
  return new MathExpression({
    expression: Object.keys(usingMetrics).map((id) => `FILL(${id}, 0)`).join(' + '),
    usingMetrics,
    period: PERIOD,
    label: `${metricName} (all operations)`,
  });
}

function loginMetrics(): { attempts: Metric; failures: Metric } {
  const metric = (metricName: string) =>
    new Metric({ namespace: METRICS_NAMESPACE, metricName, dimensionsMap: { service: 'token' }, period: PERIOD, statistic: 'Sum' });
  return { attempts: metric('LoginAttempts'), failures: metric('LoginFailures') };
}
