/**
 * The regional HTTP API, with one route per row of the route table.
 *
 * About 200 routes: `HttpLambdaIntegration` per route would add one integration and one Lambda
 * permission per route, which overflows the Lambda resource-policy size limit and crowds the
 * 500-resource stack limit. Instead each family gets one L1 integration and one permission
 * (for every route and stage of this API), and each row one L1 route pointing at its family's
 * integration.
 */
import { Duration, Stack } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import {
  CfnIntegration,
  CfnRoute,
  CorsHttpMethod,
  DomainName,
  HttpApi,
  HttpStage,
  LogGroupLogDestination,
  type ThrottleSettings,
} from 'aws-cdk-lib/aws-apigatewayv2';
import type { ICertificate } from 'aws-cdk-lib/aws-certificatemanager';
import { ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import type { Family } from '#shared/model/collections.ts';
import { routeKey, type Route } from '#shared/routes.ts';
import { acknowledge } from './nag.ts';

/** A custom domain name served by an API. */
export interface ApiDomainProps {
  readonly domainName: string;
  /** ACM certificate in the stack's region covering `domainName`. */
  readonly certificate: ICertificate;
}

export interface GatehouseHttpApiProps {
  /** The route table (`ROUTES`); every row becomes one API Gateway route. */
  readonly routes: readonly Route[];
  /** The function serving each family that appears in `routes`. */
  readonly handlers: ReadonlyMap<Family, IFunction>;
  /**
   * Browser origins allowed by CORS; `*` allows any. API Gateway then answers preflight
   * requests itself.
   * @default - CORS closed: no preflight answers, no CORS headers
   */
  readonly corsOrigins?: readonly string[];
  /**
   * Default throttling of every route of the stage.
   * @default - 100 requests per second, bursts of 200
   */
  readonly throttle?: ThrottleSettings;
  /**
   * How long access logs are kept.
   * @default RetentionDays.ONE_MONTH
   */
  readonly logRetention?: RetentionDays;
  /**
   * A custom domain name mapped to the stage.
   * @default - the execute-api URL only
   */
  readonly domain?: ApiDomainProps;
}

/** One JSON object per request: CloudWatch Logs Insights reads the fields directly. */
const ACCESS_LOG_FIELDS = {
  requestId: '$context.requestId',
  ip: '$context.identity.sourceIp',
  requestTime: '$context.requestTime',
  method: '$context.httpMethod',
  path: '$context.path',
  routeKey: '$context.routeKey',
  status: '$context.status',
  protocol: '$context.protocol',
  responseLength: '$context.responseLength',
  responseLatency: '$context.responseLatency',
  integrationStatus: '$context.integrationStatus',
  integrationLatency: '$context.integrationLatency',
  integrationError: '$context.integrationErrorMessage',
  userAgent: '$context.identity.userAgent',
};

export const DEFAULT_THROTTLE: ThrottleSettings = Object.freeze({ rateLimit: 100, burstLimit: 200 });

export class GatehouseHttpApi extends Construct {
  readonly api: HttpApi;
  readonly stage: HttpStage;
  readonly accessLogs: LogGroup;
  readonly domainName?: DomainName;
  private readonly customDomain?: string;
  /** The L1 integration of each family. */
  readonly integrations: ReadonlyMap<Family, CfnIntegration>;

  constructor(scope: Construct, id: string, props: GatehouseHttpApiProps) {
    super(scope, id);
    const origins = props.corsOrigins ?? [];

    this.api = new HttpApi(this, 'Api', {
      description: 'Gatehouse access control API',
      createDefaultStage: false,
      corsPreflight: origins.length
        ? {
            allowOrigins: [...origins],
            allowMethods: [CorsHttpMethod.GET, CorsHttpMethod.POST, CorsHttpMethod.PUT, CorsHttpMethod.DELETE],
            allowHeaders: ['authorization', 'content-type', 'idempotency-key'],
            exposeHeaders: ['location', 'retry-after', 'ratelimit', 'ratelimit-policy'],
            maxAge: Duration.minutes(10),
          }
        : undefined,
    });

    this.accessLogs = new LogGroup(this, 'AccessLogs', {
      retention: props.logRetention ?? RetentionDays.ONE_MONTH,
    });

    if (props.domain) {
      this.customDomain = props.domain.domainName;
      this.domainName = new DomainName(this, 'DomainName', {
        domainName: props.domain.domainName,
        certificate: props.domain.certificate,
      });
    }

    this.stage = new HttpStage(this, 'DefaultStage', {
      httpApi: this.api,
      // `$default` serves the API at the root of its URL, so paths are the spec's paths.
      stageName: '$default',
      autoDeploy: true,
      throttle: props.throttle ?? DEFAULT_THROTTLE,
      accessLogSettings: {
        destination: new LogGroupLogDestination(this.accessLogs),
        format: AccessLogFormat.custom(JSON.stringify(ACCESS_LOG_FIELDS)),
      },
      domainMapping: this.domainName ? { domainName: this.domainName } : undefined,
    });

    const stack = Stack.of(this);
    // Any stage, any route of this API, `$default` included (`<api>/$default/$default`).
    const invokeArn = stack.formatArn({ service: 'execute-api', resource: this.api.apiId, resourceName: '*/*' });
    const integrations = new Map<Family, CfnIntegration>();
    for (const family of new Set(props.routes.map((r) => r.family))) {
      const fn = props.handlers.get(family);
      if (!fn) throw new Error(`No function for family "${family}" of the route table`);
      integrations.set(
        family,
        new CfnIntegration(this, `Integration-${family}`, {
          apiId: this.api.apiId,
          integrationType: 'AWS_PROXY',
          integrationUri: fn.functionArn,
          payloadFormatVersion: '2.0',
        }),
      );
      fn.addPermission(`HttpApiInvoke-${family}`, {
        principal: new ServicePrincipal('apigateway.amazonaws.com'),
        sourceArn: invokeArn,
      });
    }
    this.integrations = integrations;

    const routes = new Construct(this, 'Routes');
    // Rows may share an API Gateway route (Route.gateway): one route per key.
    const byKey = new Map(props.routes.map((r) => [routeKey(r), r] as const));
    for (const [key, route] of byKey) {
      // Construct ids may not contain '/'; the logical id keeps a hash of the full key.
      new CfnRoute(routes, key.replaceAll('/', '|'), {
        apiId: this.api.apiId,
        routeKey: key,
        target: `integrations/${integrations.get(route.family)!.ref}`,
      });
    }

    acknowledge(
      routes,
      'AwsSolutions-APIG4',
      'Bearer tokens (JWT, ES256) are verified inside every family function by the shared auth middleware, the same ' +
        'code path as the local runtime; the routes the spec makes public (sysinfo, token, JWKS, $default 404) have no ' +
        'authorizer by design.',
    );
  }

  /** The base URL of the API (custom domain when one is mapped). */
  get url(): string {
    return this.customDomain ? `https://${this.customDomain}/` : this.stage.url;
  }
}
