/**
 * The access-token signing key of one region: a private JWK and the public JWKS, each in its own
 * Secrets Manager secret, filled at deploy time by the key generator (functions/keygen) behind
 * a custom resource. Key material never appears in the template, in outputs or in logs; only
 * the token function can read the private key.
 */
import { CustomResource, Duration } from 'aws-cdk-lib';
import type { Grant, IGrantable } from 'aws-cdk-lib/aws-iam';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { GatehouseFunction } from './gatehouse-function.ts';
import { acknowledge } from './nag.ts';

export interface SigningKeysProps {
  /** The package version baked into the key generator's bundle. */
  readonly version: string;
  /**
   * How long the key generator's logs are kept.
   * @default RetentionDays.ONE_MONTH
   */
  readonly logRetention?: RetentionDays;
  /**
   * Bundle the AWS SDK into the key generator (see infra/bundling.ts).
   * @default true
   */
  readonly bundleAwsSdk?: boolean;
}

export class SigningKeys extends Construct {
  /** The private JWK (`{kty,crv,x,y,d,kid,alg,use}`), for the token function only. */
  readonly signingKey: Secret;
  /** The public JWKS (`{"keys":[…]}`), for every function that verifies tokens. */
  readonly publicKeys: Secret;
  /** The custom resource; depend on it to start serving only once the keys exist. */
  readonly resource: CustomResource;
  /** The key generator behind the custom resource (functions/keygen). */
  readonly generator: GatehouseFunction;

  constructor(scope: Construct, id: string, props: SigningKeysProps) {
    super(scope, id);

    // The secrets start with a random placeholder value; the key generator replaces it.
    this.signingKey = new Secret(this, 'SigningKey', {
      description: 'Gatehouse access-token signing key (private JWK, ES256)',
    });
    this.publicKeys = new Secret(this, 'PublicKeys', {
      description: 'Gatehouse access-token verification keys (public JWKS)',
    });

    this.generator = new GatehouseFunction(this, 'Generator', {
      name: 'keygen',
      version: props.version,
      description: 'Gatehouse signing-key generator (CloudFormation custom resource)',
      memorySize: 256,
      timeout: Duration.seconds(30),
      logRetention: props.logRetention,
      bundleAwsSdk: props.bundleAwsSdk,
      noDeadLetterQueueReason:
        'Invoked by CloudFormation for the custom resource; the handler reports every failure to CloudFormation, which ' +
        'fails and rolls back the deployment. A queued event would be stale by then.',
    });
    const generator = this.generator.function;
    // Read too: the generator keeps a key pair that is already there (redeploys, retries, rollbacks).
    for (const secret of [this.signingKey, this.publicKeys]) {
      secret.grantRead(generator);
      secret.grantWrite(generator);
    }

    this.resource = new CustomResource(this, 'Generate', {
      serviceToken: generator.functionArn,
      resourceType: 'Custom::GatehouseSigningKey',
      // The handler answers within seconds; if it never does (crash, timeout), fail the
      // deployment after 5 minutes instead of CloudFormation's default hour.
      serviceTimeout: Duration.minutes(5),
      // Only secret ids: the handler writes the values. Secrets that already hold a key pair keep it.
      properties: {
        SigningKeySecretId: this.signingKey.secretArn,
        PublicKeysSecretId: this.publicKeys.secretArn,
      },
    });

    const rotation =
      'Rotating a token signing key is a key rollover (publish the new public key, then sign with it, then retire the ' +
      'old one after the token lifetime), not a password change: a Secrets Manager rotation function would invalidate ' +
      'issued tokens. The key pair is generated once per region at deploy time.';
    acknowledge(this.signingKey, 'AwsSolutions-SMG4', rotation);
    acknowledge(this.publicKeys, 'AwsSolutions-SMG4', 'Holds public keys only (the JWKS); it follows the signing key.');
  }

  /** Read access to the private key: the token function only. */
  grantSign(grantee: IGrantable): Grant {
    return this.signingKey.grantRead(grantee);
  }

  /** Read access to the public JWKS: every function that verifies tokens. */
  grantVerify(grantee: IGrantable): Grant {
    return this.publicKeys.grantRead(grantee);
  }
}
