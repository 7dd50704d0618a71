/**
 * One Gatehouse Lambda function: bundled from `functions/<name>/handler.ts` by local esbuild
 * (`index.mjs` and the chunks it loads: infra/bundling.ts), with its own log group (with
 * retention) and its own role, which may write only to that log group and to X-Ray. Everything else a function may do is granted by the stack with `grant*`.
 */
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Alias, Function as LambdaFunction, Tracing, type IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { ARCHITECTURE, RUNTIME, functionBundling, functionCode, functionEntry, type BundledFile, type FunctionBundling } from './bundling.ts';
import { LIVE_ALIAS } from './deployments.ts';
import { acknowledge } from './nag.ts';
import { DEFAULT_MEMORY_MB, DEFAULT_TIMEOUT_SECONDS } from './sizing.ts';

export interface GatehouseFunctionProps {
  /** The function folder under `functions/`; its `handler.ts` exports `handler`. */
  readonly name: string;
  /** The package version baked into the bundle as `__GATEHOUSE_VERSION__`. */
  readonly version: string;
  /**
   * Environment variables (see shared/config.ts).
   * @default - none besides NODE_OPTIONS
   */
  readonly environment?: Readonly<Record<string, string>>;
  /**
   * @default 512 (`DEFAULT_MEMORY_MB` of infra/sizing.ts)
   */
  readonly memorySize?: number;
  /**
   * @default Duration.seconds(10) (`DEFAULT_TIMEOUT_SECONDS` of infra/sizing.ts)
   */
  readonly timeout?: Duration;
  /**
   * Bundle the AWS SDK instead of importing the one the Lambda runtime ships (see
   * infra/bundling.ts).
   * @default true
   */
  readonly bundleAwsSdk?: boolean;
  /**
   * Files shipped beside the bundled code (see infra/bundling.ts `familyFiles`).
   * @default - none
   */
  readonly files?: readonly BundledFile[];
  /**
   * How long the function's logs are kept.
   * @default RetentionDays.ONE_MONTH
   */
  readonly logRetention?: RetentionDays;
  /**
   * @default - "Gatehouse <name> function"
   */
  readonly description?: string;
  /**
   * Why this function has no dead-letter queue (cdk-nag Serverless-LambdaDLQ). A DLQ only
   * receives failed asynchronous invocations, so the answer depends on how it is invoked.
   */
  readonly noDeadLetterQueueReason: string;
  /**
   * Publish each new code and configuration as a version behind the `live` alias, which the
   * function's callers then invoke (see infra/deployments.ts).
   * @default false - callers invoke the unpublished function
   */
  readonly liveAlias?: boolean;
}

export class GatehouseFunction extends Construct {
  readonly function: LambdaFunction;
  readonly role: Role;
  readonly logGroup: LogGroup;
  /** What the function's code asset is bundled from (see infra/bundling.ts). */
  readonly bundling: FunctionBundling;
  /** The `live` alias, when `liveAlias` is set. */
  readonly alias?: Alias;

  constructor(scope: Construct, id: string, props: GatehouseFunctionProps) {
    super(scope, id);

    this.logGroup = new LogGroup(this, 'Logs', {
      retention: props.logRetention ?? RetentionDays.ONE_MONTH,
    });

    // Our own role instead of the AWSLambdaBasicExecutionRole managed policy, which may write to
    // any log group of the account.
    this.role = new Role(this, 'Role', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: `Gatehouse ${props.name} function`,
    });
    this.logGroup.grantWrite(this.role);
    this.bundling = functionBundling(functionEntry(props.name), props.version, { bundleAwsSdk: props.bundleAwsSdk, files: props.files });

    this.function = new LambdaFunction(this, 'Function', {
      code: functionCode(this.bundling),
      // `handler` of index.mjs (HANDLER_FILE of infra/bundling.ts).
      handler: 'index.handler',
      runtime: RUNTIME,
      architecture: ARCHITECTURE,
      memorySize: props.memorySize ?? DEFAULT_MEMORY_MB,
      timeout: props.timeout ?? Duration.seconds(DEFAULT_TIMEOUT_SECONDS),
      description: props.description ?? `Gatehouse ${props.name} function`,
      role: this.role,
      logGroup: this.logGroup,
      tracing: Tracing.ACTIVE,
      // No NODE_OPTIONS=--enable-source-maps: it decodes the bundle's whole source map at every cold
      // start. The map still ships beside the bundle, and the stacks that reach the
      // logs are mapped to the TypeScript when they are written (shared/source-mapped-stack.ts).
      environment: { ...props.environment },
      // A version lives as long as an alias may point at it: CloudFormation deletes the previous
      // one in the cleanup phase, after the whole update (traffic shifting included) succeeded,
      // so a rollback still finds it.
      currentVersionOptions: { removalPolicy: RemovalPolicy.DESTROY },
    });
    if (props.liveAlias) {
      this.alias = new Alias(this, 'Live', { aliasName: LIVE_ALIAS, version: this.function.currentVersion });
    }

    acknowledge(
      this.role,
      'AwsSolutions-IAM5[Resource::*]',
      'X-Ray tracing: xray:PutTraceSegments and xray:PutTelemetryRecords support no resource-level permissions.',
    );
    acknowledge(this.function, 'Serverless-LambdaDLQ', props.noDeadLetterQueueReason);
  }

  /** What callers invoke: the `live` alias when there is one, else the function itself. */
  get invokable(): IFunction {
    return this.alias ?? this.function;
  }
}
