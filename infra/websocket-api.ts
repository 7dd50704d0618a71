/**
 * The WebSocket API live events are pushed through. Its routes (`WEBSOCKET_ROUTES`) all go to
 * the websocket family function; the fan-out function posts to connections through the stage's
 * management (callback) URL.
 */
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import {
  DomainName,
  LogGroupLogDestination,
  WebSocketApi,
  WebSocketStage,
  type ThrottleSettings,
} from 'aws-cdk-lib/aws-apigatewayv2';
import { WebSocketLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { DEFAULT_THROTTLE, type ApiDomainProps } from './http-api.ts';
import { acknowledge } from './nag.ts';

export interface GatehouseWebSocketApiProps {
  /** The route keys (`WEBSOCKET_ROUTES`: `$connect`, `$disconnect`, `$default`). */
  readonly routeKeys: readonly string[];
  /** The websocket family function, serving every route. */
  readonly handler: IFunction;
  /**
   * The stage name, which is the URL path (`wss://…/events`, as the local runtime serves).
   * @default 'events'
   */
  readonly stageName?: string;
  /**
   * Default throttling of every route of the stage.
   * @default - 100 messages per second, bursts of 200
   */
  readonly throttle?: ThrottleSettings;
  /**
   * Write stage access logs. WebSocket (unlike HTTP) APIs log through the account-wide API
   * Gateway CloudWatch role (`AWS::ApiGateway::Account`), which this stack does not own: turn
   * this on once that role is set in the region, or the stage fails to deploy.
   * @default false
   */
  readonly accessLogs?: boolean;
  /**
   * How long access logs are kept, when they are on.
   * @default RetentionDays.ONE_MONTH
   */
  readonly logRetention?: RetentionDays;
  /**
   * A custom domain name mapped to the stage.
   * @default - the execute-api URL only
   */
  readonly domain?: ApiDomainProps;
}

const ACCESS_LOG_FIELDS = {
  requestId: '$context.requestId',
  ip: '$context.identity.sourceIp',
  requestTime: '$context.requestTime',
  eventType: '$context.eventType',
  routeKey: '$context.routeKey',
  connectionId: '$context.connectionId',
  status: '$context.status',
  integrationError: '$context.integrationErrorMessage',
};

export class GatehouseWebSocketApi extends Construct {
  readonly api: WebSocketApi;
  readonly stage: WebSocketStage;
  readonly domainName?: DomainName;
  private readonly customDomain?: string;

  constructor(scope: Construct, id: string, props: GatehouseWebSocketApiProps) {
    super(scope, id);
    this.api = new WebSocketApi(this, 'Api', { description: 'Gatehouse live events' });

    const integration = new WebSocketLambdaIntegration('Handler', props.handler);
    for (const key of props.routeKeys) this.api.addRoute(key, { integration });

    if (props.domain) {
      this.customDomain = props.domain.domainName;
      this.domainName = new DomainName(this, 'DomainName', {
        domainName: props.domain.domainName,
        certificate: props.domain.certificate,
      });
    }

    const accessLogs = props.accessLogs
      ? new LogGroup(this, 'AccessLogs', { retention: props.logRetention ?? RetentionDays.ONE_MONTH })
      : undefined;

    this.stage = new WebSocketStage(this, 'Stage', {
      webSocketApi: this.api,
      stageName: props.stageName ?? 'events',
      autoDeploy: true,
      throttle: props.throttle ?? DEFAULT_THROTTLE,
      accessLogSettings: accessLogs
        ? {
            destination: new LogGroupLogDestination(accessLogs),
            format: AccessLogFormat.custom(JSON.stringify(ACCESS_LOG_FIELDS)),
          }
        : undefined,
      domainMapping: this.domainName ? { domainName: this.domainName } : undefined,
    });

    if (!accessLogs) {
      const reason =
        'WebSocket stage access logs need the account-wide API Gateway CloudWatch role, which this stack does not own; ' +
        'enable them with the gatehouse:websocketAccessLogs context once that role is set. The websocket and fan-out ' +
        'functions log every connect, disconnect and delivery.';
      acknowledge(this.stage, 'AwsSolutions-APIG1', reason);
      acknowledge(this.stage, 'Serverless-APIGWAccessLogging', reason);
    }
    acknowledge(
      this.api,
      'AwsSolutions-APIG4',
      'The websocket function verifies the bearer token on $connect (sent in the query string: browsers cannot set ' +
        'WebSocket headers), the same code path as the local runtime, and refuses the connection without one.',
    );
  }

  /** The `wss://` URL clients connect to (custom domain when one is mapped). */
  get url(): string {
    return this.customDomain ? `wss://${this.customDomain}` : this.stage.url;
  }

  /** The `https://` URL of the connection management API (`POST @connections/{id}`). */
  get callbackUrl(): string {
    return this.stage.callbackUrl;
  }
}
