/**
 * How a new version of the code reaches traffic. Every family's function is published behind
 * its `live` alias (infra/gatehouse-function.ts), and everything that invokes a family invokes
 * that alias: the HTTP API routes, the WebSocket routes, the IoT custom authorizer, and the
 * event source mappings (the table stream into the fan-out, the webhook job queue into the
 * webhooks function). So one alias per family decides which code serves it.
 *
 * With `AllAtOnce` (the default, `npx cdk deploy` on a developer account) CloudFormation points
 * each alias at the new version in one step. With `Canary10Percent5Minutes` or
 * `Linear10PercentEvery1Minute`, a CodeDeploy deployment group per family shifts the alias's
 * traffic gradually and rolls it back automatically when that family's error alarms go off
 * (infra/observability.ts: failed invocations, and the 5xx answers of an HTTP family) or the
 * deployment fails or is stopped. The stream and queue consumers shift too: an event source
 * mapping invokes the alias, whose weights split its batches between the two versions.
 */
import { Role, ServicePrincipal, ManagedPolicy, type IRole } from 'aws-cdk-lib/aws-iam';
import type { IAlarm } from 'aws-cdk-lib/aws-cloudwatch';
import { LambdaApplication, LambdaDeploymentConfig, LambdaDeploymentGroup, type ILambdaDeploymentConfig } from 'aws-cdk-lib/aws-codedeploy';
import type { Alias } from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import type { Family } from '#shared/model/collections.ts';
import { acknowledge } from './nag.ts';

/** The values of the `gatehouse:deployment` context. */
export const DEPLOYMENT_STRATEGIES = Object.freeze(['AllAtOnce', 'Canary10Percent5Minutes', 'Linear10PercentEvery1Minute'] as const);
export type DeploymentStrategy = (typeof DEPLOYMENT_STRATEGIES)[number];
export const DEFAULT_DEPLOYMENT_STRATEGY: DeploymentStrategy = 'AllAtOnce';

/** The name every family's alias has. */
export const LIVE_ALIAS = 'live';

const CONFIGS: Readonly<Record<Exclude<DeploymentStrategy, 'AllAtOnce'>, ILambdaDeploymentConfig>> = {
  Canary10Percent5Minutes: LambdaDeploymentConfig.CANARY_10PERCENT_5MINUTES,
  Linear10PercentEvery1Minute: LambdaDeploymentConfig.LINEAR_10PERCENT_EVERY_1MINUTE,
};

export function isDeploymentStrategy(value: unknown): value is DeploymentStrategy {
  return typeof value === 'string' && (DEPLOYMENT_STRATEGIES as readonly string[]).includes(value);
}

export interface GatehouseDeploymentsProps {
  /** How new versions reach traffic. */
  readonly strategy: DeploymentStrategy;
  /** The `live` alias of each family. */
  readonly aliases: ReadonlyMap<Family, Alias>;
  /** The alarms that roll back a family's deployment (at most 10 per family: CodeDeploy's limit). */
  readonly rollbackAlarms: ReadonlyMap<Family, readonly IAlarm[]>;
}

export class GatehouseDeployments extends Construct {
  /** The deployment group of each family; empty with `AllAtOnce`. */
  readonly groups: ReadonlyMap<Family, LambdaDeploymentGroup>;
  readonly application?: LambdaApplication;

  constructor(scope: Construct, id: string, props: GatehouseDeploymentsProps) {
    super(scope, id);
    const groups = new Map<Family, LambdaDeploymentGroup>();
    this.groups = groups;
    if (props.strategy === 'AllAtOnce') return;

    const deploymentConfig = CONFIGS[props.strategy];
    this.application = new LambdaApplication(this, 'Application');
    // One service role for every group instead of one each: LambdaDeploymentGroup attaches the
    // managed policy to the role it is given, so it gets an immutable view and the policy is
    // attached here once.
    const role = new Role(this, 'Role', {
      assumedBy: new ServicePrincipal('codedeploy.amazonaws.com'),
      description: 'CodeDeploy: shifts the live alias of each Gatehouse function',
      managedPolicies: [ManagedPolicy.fromAwsManagedPolicyName('service-role/AWSCodeDeployRoleForLambdaLimited')],
    });
    acknowledge(
      role,
      'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSCodeDeployRoleForLambdaLimited]',
      'The AWS managed policy CodeDeploy documents for Lambda deployments (alias updates, alarm reads, hook ' +
        'invocations of CodeDeployHook_* functions only); AWS keeps it current with the service.',
    );
    const groupRole: IRole = role.withoutPolicyUpdates();

    for (const [family, alias] of props.aliases) {
      const alarms = props.rollbackAlarms.get(family) ?? [];
      if (alarms.length === 0) throw new Error(`No rollback alarm for the ${family} function`);
      groups.set(
        family,
        new LambdaDeploymentGroup(this, family, {
          application: this.application,
          alias,
          deploymentConfig,
          role: groupRole,
          alarms: [...alarms],
          autoRollback: { deploymentInAlarm: true, failedDeployment: true, stoppedDeployment: true },
        }),
      );
    }
  }
}
