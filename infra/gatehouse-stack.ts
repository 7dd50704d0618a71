/**
 * One region of Gatehouse: table, signing keys, one function per family, the HTTP API built
 * from the route table, the WebSocket API with its stream fan-out, and the one-time-password
 * topic. Nothing is shared with other regions' stacks.
 */
import { CfnOutput, Duration, Stack, type StackProps } from 'aws-cdk-lib';
import { Certificate } from 'aws-cdk-lib/aws-certificatemanager';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Alias } from 'aws-cdk-lib/aws-kms';
import { StartingPosition, type IFunction } from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { TABLE } from '#shared/db/table.ts';
import type { Family } from '#shared/model/collections.ts';
import { ROUTES, WEBSOCKET_ROUTES, httpFamilies } from '#shared/routes.ts';
import type { AlarmThresholds } from './alarm-thresholds.ts';
import { familyFiles, packageVersion } from './bundling.ts';
import { DEFAULT_RATE_LIMITS, type CustomDomainConfig } from './cdk-context.ts';
import { GatehouseDeployments, type DeploymentStrategy } from './deployments.ts';
import { GatehouseFunction } from './gatehouse-function.ts';
import { GatehouseTable } from './gatehouse-table.ts';
import { GatehouseHttpApi, type ApiDomainProps } from './http-api.ts';
import { acknowledge, acknowledgeWildcardResource } from './nag.ts';
import { SigningKeys } from './signing-keys.ts';
import { SIZING } from './sizing.ts';
import { GatehouseMqtt } from './mqtt.ts';
import { GatehouseObservability } from './observability.ts';
import { GatehouseWebhooks } from './webhooks.ts';
import { GatehouseWebSocketApi } from './websocket-api.ts';

export interface GatehouseStackProps extends StackProps {
  /** The region code this stack serves (`US`, `EU`, `CA`). */
  readonly regionCode: string;
  /**
   * DynamoDB deletion protection on the table.
   * @default true
   */
  readonly deletionProtection?: boolean;
  /**
   * Browser origins allowed by CORS on the HTTP API; `*` allows any.
   * @default - CORS closed
   */
  readonly corsOrigins?: readonly string[];
  /**
   * Custom domain names of the APIs.
   * @default - execute-api URLs only
   */
  readonly customDomain?: CustomDomainConfig;
  /**
   * WebSocket stage access logs (need the account's API Gateway CloudWatch role).
   * @default false
   */
  readonly websocketAccessLogs?: boolean;
  /**
   * JSON text of the licence authority's public JWK, given to the token function.
   * @default - none: logins answer `instance_license_tampered` until it is set
   */
  readonly licenseAuthorityKey?: string;
  /**
   * Days events are kept before DynamoDB's TTL deletes them (`GATEHOUSE_EVENT_RETENTION_DAYS` of
   * the functions that write events: events, and fanout for the audit trail).
   * @default 365
   */
  readonly eventRetentionDays?: number;
  /**
   * How long function and access logs are kept.
   * @default RetentionDays.ONE_MONTH
   */
  readonly logRetention?: RetentionDays;
  /**
   * The version baked into every bundle.
   * @default - package.json's version
   */
  readonly version?: string;
  /**
   * Bundle the AWS SDK into every function instead of using the one the Lambda runtime ships
   * (see infra/bundling.ts).
   * @default true
   */
  readonly bundleAwsSdk?: boolean;
  /**
   * How a new version of each family's code reaches traffic (infra/deployments.ts).
   * @default 'AllAtOnce' - no CodeDeploy: CloudFormation points each `live` alias at the new version
   */
  readonly deployment?: DeploymentStrategy;
  /**
   * Alarm thresholds that differ from the defaults (infra/alarm-thresholds.ts).
   * @default - DEFAULT_ALARM_THRESHOLDS
   */
  readonly alarmThresholds?: Partial<AlarmThresholds>;
  /**
   * Days a token signing key signs before the scheduled rollover (see infra/signing-keys.ts); 0:
   * only on demand.
   * @default 30
   */
  readonly signingKeyRotationDays?: number;
  /**
   * Requests a second one instance's callers may make, per execution environment of each HTTP
   * family (`GATEHOUSE_RATE_LIMIT_PER_INSTANCE`, shared/http/rate-limit.ts); 0: no limit. With N
   * environments a tenant may pass up to N times it: the stage throttling is the backstop.
   * @default 100
   */
  readonly rateLimitPerInstance?: number;
  /**
   * Requests a second one user may make, per execution environment of each HTTP family
   * (`GATEHOUSE_RATE_LIMIT_PER_USER`); 0: no limit.
   * @default 20
   */
  readonly rateLimitPerUser?: number;
}

const HTTP_INVOKED =
  'Invoked synchronously by API Gateway: a failure is answered to the client (JSON error body), and a dead-letter ' +
  'queue only ever receives failed asynchronous invocations.';

/** The memory and timeout of a family with an entry in infra/sizing.ts; else GatehouseFunction's defaults. */
function sizingOf(family: Family): { memorySize?: number; timeout?: Duration } {
  const s = SIZING[family];
  return s ? { memorySize: s.memoryMb, timeout: Duration.seconds(s.timeoutSeconds) } : {};
}

/** A rate limit as its setting's text; a value the functions would refuse to start with fails the synth instead. */
function rateLimitText(prop: string, value: number): string {
  if (!Number.isInteger(value) || value < 0 || value > 1_000_000) throw new Error(`${prop} must be a whole number of requests a second from 0 to 1000000 (got ${value})`);
  return String(value);
}

export class GatehouseStack extends Stack {
  readonly table: GatehouseTable;
  readonly keys: SigningKeys;
  readonly httpApi: GatehouseHttpApi;
  readonly webSocketApi: GatehouseWebSocketApi;
  readonly notifyTopic: Topic;
  readonly fanoutDeadLetters: Queue;
  /** The MQTT live feed on IoT Core (custom authorizer, data endpoint). */
  readonly mqtt: GatehouseMqtt;
  /** Webhook delivery: the job queue, its dead-letter queue and alarm. */
  readonly webhooks: GatehouseWebhooks;
  /** Every family's function (HTTP families, websocket, fanout, mqttauth). */
  readonly functions: ReadonlyMap<Family, GatehouseFunction>;
  /** Alarms (to the `AlarmTopicArn` topic), dashboard and tenant usage queries. */
  readonly observability: GatehouseObservability;
  /** The CodeDeploy deployment group of each family (none with `AllAtOnce`). */
  readonly deployments: GatehouseDeployments;

  constructor(scope: Construct, id: string, props: GatehouseStackProps) {
    super(scope, id, {
      description: `Gatehouse access control service, region ${props.regionCode}`,
      ...props,
    });
    const version = props.version ?? packageVersion();
    const logRetention = props.logRetention;
    // What every function of the stack shares besides its own settings.
    const common = { version, logRetention, bundleAwsSdk: props.bundleAwsSdk };
    // Every family is published behind its `live` alias, which is what its callers invoke.
    const published = { ...common, liveAlias: true };

    this.table = new GatehouseTable(this, 'Data', {
      definition: TABLE,
      deletionProtection: props.deletionProtection,
    });

    this.keys = new SigningKeys(this, 'SigningKeys', { ...common, table: this.table, rotationDays: props.signingKeyRotationDays });

    // One-time passwords go out through this topic. To deliver them, subscribe endpoints outside
    // the stack (they are per deployment and need confirming), for example:
    //   aws sns subscribe --region <region> --topic-arn <NotifyTopicArn output> --protocol email --notification-endpoint ops@example.com
    //   aws sns subscribe --region <region> --topic-arn <NotifyTopicArn output> --protocol sms --notification-endpoint +15555550100
    // or publish to phone numbers directly (the token function may; SMS needs the account's
    // SNS SMS sandbox exit and spend limit). Messages are encrypted at rest with the AWS managed
    // SNS key, which email and SMS delivery can read.
    this.notifyTopic = new Topic(this, 'NotifyTopic', {
      displayName: 'Gatehouse',
      enforceSSL: true,
      masterKey: Alias.fromAliasName(this, 'SnsManagedKey', 'alias/aws/sns'),
    });

    const domains = this.customDomains(props.customDomain);

    // One scope for the functions keeps family names clear of the stack's other construct ids.
    const functionScope = new Construct(this, 'Functions');

    // The WebSocket API first: every function learns its URLs from the environment.
    const websocketFn = new GatehouseFunction(functionScope, 'websocket', {
      name: 'websocket',
      ...published,
      noDeadLetterQueueReason:
        'Invoked synchronously by the API Gateway WebSocket API ($connect/$disconnect/$default); a failure is ' +
        'answered on the connection.',
    });
    this.webSocketApi = new GatehouseWebSocketApi(this, 'LiveEvents', {
      routeKeys: WEBSOCKET_ROUTES,
      handler: websocketFn.invokable,
      accessLogs: props.websocketAccessLogs,
      logRetention,
      domain: domains.websocket,
    });

    // The MQTT live feed: IoT Core calls this authorizer for each connection (5 s limit).
    const mqttAuth = new GatehouseFunction(functionScope, 'mqttauth', {
      name: 'mqttauth',
      ...published,
      ...sizingOf('mqttauth'),
      environment: {
        GATEHOUSE_TABLE_NAME: this.table.tableName,
        GATEHOUSE_REGION: this.region,
        GATEHOUSE_PUBLIC_KEYS: 'table',
      },
      noDeadLetterQueueReason:
        'Invoked synchronously by AWS IoT Core as the custom authorizer of each MQTT connection; a failure refuses ' +
        'the connection and the client retries.',
    });
    this.mqtt = new GatehouseMqtt(this, 'Mqtt', { authorizer: mqttAuth.invokable });

    const eventRetentionDays = props.eventRetentionDays ?? 365;
    const baseEnvironment: Record<string, string> = {
      GATEHOUSE_TABLE_NAME: this.table.tableName,
      GATEHOUSE_REGION: this.region,
      GATEHOUSE_EVENT_PUBLISHER_URL: this.webSocketApi.url,
      GATEHOUSE_MQTT_PUBLISHER_URL: this.mqtt.url,
      GATEHOUSE_WEBSOCKET_MANAGEMENT_URL: this.webSocketApi.callbackUrl,
      // The key manager publishes the JWKS in the table (infra/signing-keys.ts).
      GATEHOUSE_PUBLIC_KEYS: 'table',
      // With a custom domain the API has a public URL of its own to name in the OpenAPI document
      // and to refuse as a webhook target (the execute-api URL would make a dependency cycle).
      ...(domains.http ? { GATEHOUSE_PUBLIC_URL: `https://${domains.http.domainName}` } : {}),
      ...(props.corsOrigins?.length ? { GATEHOUSE_CORS_ORIGINS: props.corsOrigins.join(',') } : {}),
    };
    for (const [name, value] of Object.entries(baseEnvironment)) websocketFn.function.addEnvironment(name, value);

    const functions = new Map<Family, GatehouseFunction>([
      ['websocket', websocketFn],
      ['mqttauth', mqttAuth],
    ]);
    // A family that serves any route needing a bearer token verifies tokens; token serves the JWKS.
    const verifies = new Set<Family>(['token', 'websocket', 'mqttauth', ...ROUTES.filter((r) => r.auth).map((r) => r.family)]);

    // Every HTTP family limits the calls with a token it serves (the pipeline's rate-limit step).
    const rateLimits = {
      GATEHOUSE_RATE_LIMIT_PER_INSTANCE: rateLimitText('rateLimitPerInstance', props.rateLimitPerInstance ?? DEFAULT_RATE_LIMITS.perInstance),
      GATEHOUSE_RATE_LIMIT_PER_USER: rateLimitText('rateLimitPerUser', props.rateLimitPerUser ?? DEFAULT_RATE_LIMITS.perUser),
    };
    for (const family of httpFamilies()) {
      const fn = new GatehouseFunction(functionScope, family, {
        name: family,
        ...published,
        ...sizingOf(family),
        files: familyFiles(family),
        environment: {
          ...baseEnvironment,
          ...rateLimits,
          ...(family === 'token'
            ? {
                GATEHOUSE_SIGNING_KEY_SECRET: this.keys.signingKey.secretArn,
                GATEHOUSE_NOTIFY_TOPIC_ARN: this.notifyTopic.topicArn,
                ...(props.licenseAuthorityKey ? { GATEHOUSE_LICENSE_AUTHORITY_KEY: props.licenseAuthorityKey } : {}),
              }
            : {}),
          ...(family === 'events' ? { GATEHOUSE_EVENT_RETENTION_DAYS: String(eventRetentionDays) } : {}),
          // Private targets are always refused in AWS.
          ...(family === 'webhooks' ? { GATEHOUSE_WEBHOOK_ALLOW_LOOPBACK: 'false' } : {}),
          // Identity providers (written by folders, used by token): https issuers only in AWS.
          ...(family === 'folders' || family === 'token' ? { GATEHOUSE_IDP_ALLOW_LOOPBACK: 'false' } : {}),
        },
        noDeadLetterQueueReason:
          family === 'webhooks'
            ? `${HTTP_INVOKED} Its other caller, the SQS event source of the webhook job queue, dead-letters through the queue's redrive policy.`
            : HTTP_INVOKED,
      });
      functions.set(family, fn);
    }

    const fanout = new GatehouseFunction(functionScope, 'fanout', {
      name: 'fanout',
      ...published,
      environment: {
        GATEHOUSE_TABLE_NAME: this.table.tableName,
        GATEHOUSE_REGION: this.region,
        GATEHOUSE_EVENT_PUBLISHER_URL: this.webSocketApi.url,
        GATEHOUSE_WEBSOCKET_MANAGEMENT_URL: this.webSocketApi.callbackUrl,
        GATEHOUSE_MQTT_PUBLISHER_URL: this.mqtt.url,
        GATEHOUSE_MQTT_PUBLISH_URL: this.mqtt.publishUrl,
        GATEHOUSE_EVENT_RETENTION_DAYS: String(eventRetentionDays),
        GATEHOUSE_WEBHOOK_ALLOW_LOOPBACK: 'false',
      },
      noDeadLetterQueueReason:
        'Invoked by the DynamoDB stream event source mapping, whose failed batches go to its on-failure SQS ' +
        'destination (FanoutDeadLetters); a function DLQ applies to asynchronous invocations only.',
    });
    functions.set('fanout', fanout);
    this.functions = functions;

    // Grants: the service family (sysinfo, 404) touches neither the table nor the keys; the
    // authorizer reads (token status, instance scope) and only puts its client records. Reading the table is reading the JWKS,
    // so a verifying function's code goes live only once the key manager has published it (an
    // upgrade from the JWKS secret, too: the custom resource's Update writes the item first).
    for (const [family, fn] of functions) {
      if (family === 'mqttauth') {
        this.table.grantReadData(fn.function);
        // Its one write: the record of a client it let in (`MQC#<clientId>`), nothing else.
        fn.function.addToRolePolicy(
          new PolicyStatement({
            actions: ['dynamodb:PutItem'],
            resources: [this.table.table.tableArn],
            conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['MQC#*'] } },
          }),
        );
      }
      else if (family !== 'service') this.table.grantReadWriteData(fn.function);
      if (verifies.has(family)) fn.node.addDependency(this.keys.resource);
    }
    const token = functions.get('token');
    if (token) {
      this.keys.grantSign(token.function);
      this.notifyTopic.grantPublish(token.function);
    }

    this.httpApi = new GatehouseHttpApi(this, 'Http', {
      routes: ROUTES,
      handlers: new Map<Family, IFunction>([...functions].map(([family, fn]) => [family, fn.invokable])),
      corsOrigins: props.corsOrigins,
      logRetention,
      domain: domains.http,
    });
    // Serve only once the signing key exists.
    this.httpApi.stage.node.addDependency(this.keys.resource);
    this.webSocketApi.stage.node.addDependency(this.keys.resource);

    // Live events: the stream of the table feeds the fan-out, which posts to connections.
    for (const fn of [websocketFn, fanout]) {
      this.webSocketApi.stage.grantManagementApiAccess(fn.function);
      acknowledgeWildcardResource(
        fn.role,
        `${this.formatArn({ service: 'execute-api', resource: this.webSocketApi.api.apiId })}/${this.webSocketApi.stage.stageName}/*/@connections/*`,
        'execute-api:ManageConnections on the connections of this one WebSocket stage; connection ids are only known ' +
          'at run time.',
      );
    }
    // One IoT Publish per (event, topic); the broker fans out to the MQTT subscribers.
    this.mqtt.grantPublish(fanout.function);
    // A revoked user's MQTT clients are disconnected by the fan-out (their ids from the authorizer).
    this.mqtt.grantDisconnect(fanout.function);
    // One SQS message per (event, webhook subscription); the webhooks function delivers them.
    const webhooksFn = functions.get('webhooks')!;
    const thresholds = props.alarmThresholds ?? {};
    this.webhooks = new GatehouseWebhooks(this, 'Webhooks', {
      sender: webhooksFn.invokable,
      producers: [fanout.function],
      deadLetterAlarmThreshold: thresholds.deadLetterMessages,
    });
    for (const fn of [webhooksFn, fanout]) {
      fn.function.addEnvironment('GATEHOUSE_WEBHOOK_QUEUE_URL', this.webhooks.queue.queueUrl);
      fn.function.addEnvironment('GATEHOUSE_WEBHOOK_SECRET_KEY_SECRET', this.webhooks.secretKey.secretArn);
    }
    // The same key seals the identity providers' client secrets: folders writes them, token reads them.
    for (const family of ['folders', 'token'] as const) {
      const fn = functions.get(family);
      if (!fn) continue;
      fn.function.addEnvironment('GATEHOUSE_WEBHOOK_SECRET_KEY_SECRET', this.webhooks.secretKey.secretArn);
      this.webhooks.secretKey.grantRead(fn.function);
    }
    this.fanoutDeadLetters = new Queue(this, 'FanoutDeadLetters', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    const deadLetterReason =
      'This queue is itself the dead-letter destination (on-failure destination of the fan-out stream mapping); ' +
      'records land here after retries and are inspected by operators.';
    acknowledge(this.fanoutDeadLetters, 'AwsSolutions-SQS3', deadLetterReason);
    acknowledge(this.fanoutDeadLetters, 'Serverless-SQSRedrivePolicy', deadLetterReason);
    fanout.invokable.addEventSource(
      new DynamoEventSource(this.table.table, {
        startingPosition: StartingPosition.LATEST,
        batchSize: 100,
        retryAttempts: 5,
        bisectBatchOnError: true,
        reportBatchItemFailures: true,
        onFailure: new SqsDlq(this.fanoutDeadLetters),
      }),
    );
    acknowledge(
      fanout.role,
      'AwsSolutions-IAM5[Resource::*]',
      'X-Ray (xray:PutTraceSegments, xray:PutTelemetryRecords) and the stream event source mapping ' +
        '(dynamodb:ListStreams) support no resource-level permissions.',
    );

    this.observability = new GatehouseObservability(this, 'Observability', {
      thresholds,
      functions,
      httpFamilies: httpFamilies(),
      httpApi: this.httpApi.api,
      table: this.table.table,
      streamConsumer: 'fanout',
      deadLetterQueues: new Map([
        ['fanout', this.fanoutDeadLetters],
        ['webhooks', this.webhooks.deadLetters],
      ]),
      deadLetterAlarms: new Map([['webhooks', this.webhooks.deadLetterAlarm]]),
    });
    this.deployments = new GatehouseDeployments(this, 'Deployments', {
      strategy: props.deployment ?? 'AllAtOnce',
      aliases: new Map([...functions].map(([f, fn]) => [f, fn.alias!])),
      rollbackAlarms: this.observability.familyErrorAlarms,
    });

    // nodejs24.x exists; we stay on nodejs22.x until the toolchain moves (see infra/bundling.ts).
    const runtimeReason =
      'nodejs22.x on purpose: the local toolchain (Node 20, esbuild target node22) and the tests are checked against ' +
      'it; runtime and esbuild target move to nodejs24.x together.';
    acknowledge(this, 'AwsSolutions-L1', runtimeReason);
    acknowledge(this, 'Serverless-LambdaLatestVersion', runtimeReason);

    new CfnOutput(this, 'HttpApiUrl', { value: this.httpApi.url, description: 'Base URL of the HTTP API' });
    new CfnOutput(this, 'WebSocketUrl', { value: this.webSocketApi.url, description: 'Live events (wss://)' });
    new CfnOutput(this, 'MqttUrl', {
      value: this.mqtt.url,
      description: 'Live events over MQTT (wss://, AWS IoT Core with the custom authorizer; username = access token)',
    });
    new CfnOutput(this, 'TableName', { value: this.table.tableName });
    new CfnOutput(this, 'NotifyTopicArn', {
      value: this.notifyTopic.topicArn,
      description: 'One-time password delivery; subscribe email/SMS endpoints to it',
    });
    if (this.httpApi.domainName) {
      new CfnOutput(this, 'HttpDomainTarget', {
        value: this.httpApi.domainName.regionalDomainName,
        description: 'DNS: CNAME/alias of the HTTP API custom domain',
      });
    }
    if (this.webSocketApi.domainName) {
      new CfnOutput(this, 'WebSocketDomainTarget', {
        value: this.webSocketApi.domainName.regionalDomainName,
        description: 'DNS: CNAME/alias of the WebSocket API custom domain',
      });
    }
  }

  private customDomains(config: CustomDomainConfig | undefined): { http?: ApiDomainProps; websocket?: ApiDomainProps } {
    if (!config || (!config.httpDomainName && !config.websocketDomainName)) return {};
    const certificate = Certificate.fromCertificateArn(this, 'Certificate', config.certificateArn);
    return {
      http: config.httpDomainName ? { domainName: config.httpDomainName, certificate } : undefined,
      websocket: config.websocketDomainName ? { domainName: config.websocketDomainName, certificate } : undefined,
    };
  }
}
