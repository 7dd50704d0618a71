/**
 * The MQTT live feed of one region on AWS IoT Core:
 *
 * - the account's IoT data endpoint (`iot:Data-ATS`), read at deploy time by a custom resource
 *   calling `iot:DescribeEndpoint` (it cannot be looked up offline);
 * - the custom authorizer (`mqttauth` function, signing disabled, ACTIVE) and IoT Core's
 *   permission to invoke it;
 * - `iot:Publish` on the live topics (`/<instance>/…`) for the fan-out, and the endpoint in its
 *   environment.
 *
 * Clients connect to `wss://<endpoint>/mqtt?x-amz-customauthorizer-name=<name>` (the
 * {@link GatehouseMqtt.url}): on the default IoT endpoint the authorizer is chosen per connection
 * by that query parameter (or a `?x-amz-customauthorizer-name=` suffix on the MQTT username).
 */
import { Stack } from 'aws-cdk-lib';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { CfnAuthorizer } from 'aws-cdk-lib/aws-iot';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { AwsCustomResource, AwsCustomResourcePolicy, PhysicalResourceId } from 'aws-cdk-lib/custom-resources';
import { Construct } from 'constructs';
import { acknowledge, acknowledgeWildcardResource } from './nag.ts';

/** Construct id of the provider function `AwsCustomResource` adds to the stack (its fixed UUID). */
const AWS_CUSTOM_RESOURCE_PROVIDER_ID = 'AWS679f53fac002430cb0da5b7982bd2287';

export interface GatehouseMqttProps {
  /** The custom authorizer (`functions/mqttauth`). */
  readonly authorizer: IFunction;
}

export class GatehouseMqtt extends Construct {
  /** `<prefix>-ats.iot.<region>.amazonaws.com` (a deploy-time token). */
  readonly endpoint: string;
  readonly authorizer: CfnAuthorizer;
  /** What MQTT clients connect to: `wss://<endpoint>/mqtt?x-amz-customauthorizer-name=<name>`. */
  readonly url: string;
  /** The IoT data plane URL the fan-out publishes to (`https://<endpoint>`). */
  readonly publishUrl: string;

  constructor(scope: Construct, id: string, props: GatehouseMqttProps) {
    super(scope, id);
    const stack = Stack.of(this);

    const describe = new AwsCustomResource(this, 'DataEndpoint', {
      onUpdate: {
        service: 'Iot',
        action: 'describeEndpoint',
        parameters: { endpointType: 'iot:Data-ATS' },
        physicalResourceId: PhysicalResourceId.of('iot-data-ats-endpoint'),
      },
      // iot:DescribeEndpoint supports no resource-level permissions.
      policy: AwsCustomResourcePolicy.fromSdkCalls({ resources: AwsCustomResourcePolicy.ANY_RESOURCE }),
      installLatestAwsSdk: false,
    });
    acknowledge(
      describe,
      'AwsSolutions-IAM5[Resource::*]',
      'iot:DescribeEndpoint (reading the account\'s IoT data endpoint at deploy time) supports no resource-level permissions.',
    );
    this.endpoint = describe.getResponseField('endpointAddress');
    // The provider function AwsCustomResource shares across the stack (one per stack).
    const provider = stack.node.tryFindChild(AWS_CUSTOM_RESOURCE_PROVIDER_ID);
    if (provider) {
      const why =
        'CDK\'s AwsCustomResource provider, run only by CloudFormation at deploy time for one read-only SDK call ' +
        '(iot:DescribeEndpoint); it is not a workload function.';
      acknowledge(provider, 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]', `${why} Its role carries only the basic logging policy.`);
      acknowledge(provider, 'Serverless-LambdaDLQ', `${why} CloudFormation invokes it synchronously and fails the deployment on error.`);
      acknowledge(provider, 'Serverless-LambdaDefaultMemorySize', `${why} CDK sizes it.`);
      acknowledge(provider, 'Serverless-LambdaTracing', `${why} Nothing to trace.`);
    }

    const name = `${stack.stackName}-mqtt`;
    this.authorizer = new CfnAuthorizer(this, 'Authorizer', {
      authorizerName: name,
      authorizerFunctionArn: props.authorizer.functionArn,
      // The access token travels in the MQTT username (or the URL query); there is no signature to check.
      signingDisabled: true,
      status: 'ACTIVE',
      enableCachingForHttp: false,
    });
    props.authorizer.addPermission('IotInvoke', {
      principal: new ServicePrincipal('iot.amazonaws.com'),
      sourceArn: this.authorizer.attrArn,
    });

    this.url = `wss://${this.endpoint}/mqtt?x-amz-customauthorizer-name=${name}`;
    this.publishUrl = `https://${this.endpoint}`;
  }

  /** Lets a function publish to the live topics `/<instance>/…` (and nothing else). */
  grantPublish(fn: IFunction): void {
    const topics = Stack.of(this).formatArn({ service: 'iot', resource: 'topic', resourceName: '/*' });
    fn.addToRolePolicy(new PolicyStatement({ actions: ['iot:Publish'], resources: [topics] }));
    if (fn.role) {
      acknowledgeWildcardResource(
        fn.role,
        topics,
        'iot:Publish on the live topics (/<instance_key>/$ and /<instance_key>/<object_key>); instance and object keys are ' +
          'only known at run time, and clients receive only what the custom authorizer\'s policy allows.',
      );
    }
  }

  /**
   * iot:DeleteConnection on every client id: the fan-out disconnects a revoked user's clients
   * (their ids, recorded by the authorizer, are only known at run time).
   */
  grantDisconnect(fn: IFunction): void {
    const clients = Stack.of(this).formatArn({ service: 'iot', resource: 'client', resourceName: '*' });
    fn.addToRolePolicy(new PolicyStatement({ actions: ['iot:DeleteConnection'], resources: [clients] }));
    if (fn.role) {
      acknowledgeWildcardResource(
        fn.role,
        clients,
        'iot:DeleteConnection of the MQTT clients of a revoked user; client ids are chosen by clients and only known at run time.',
      );
    }
  }
}
