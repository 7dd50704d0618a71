/**
 * The access-token signing keys of one region: the private key ring in a Secrets Manager secret,
 * the public JWKS in one item of the stack's table (PK `KEYS`, SK `JWKS`), both filled at deploy
 * time by the key manager (functions/keygen) behind a custom resource and rolled over by the same
 * function on an hourly schedule (see shared/auth/key-ring.ts). Key material never appears in the
 * template, in outputs or in logs; only the token function (and the key manager) can read the
 * private keys.
 *
 * Why the JWKS is in the table: every verifying function already reads the table, so a new
 * execution environment reads the keys over the connection it opens anyway, and its bundle carries
 * no Secrets Manager client (shared/db/published-keys.ts). The key manager may write that one
 * item and no other (IAM `dynamodb:LeadingKeys`).
 *
 * Why a scheduled function and not Secrets Manager rotation: a key rollover is three steps hours
 * apart (publish the new public key, sign with it once every cache has re-read the JWKS, drop the
 * old one once its last token has expired). A Secrets Manager rotation runs its four steps back to
 * back and keeps one previous version (AWSPREVIOUS) until the next rotation; the schedule runs the
 * ring's maintenance step, which does each step when its time has come and nothing otherwise.
 */
import { CustomResource, Duration } from 'aws-cdk-lib';
import { Rule, RuleTargetInput, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import type { Grant, IGrantable } from 'aws-cdk-lib/aws-iam';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { PUBLIC_KEYS_PK } from '../shared/db/item-keys.ts';
import { GatehouseFunction } from './gatehouse-function.ts';
import type { GatehouseTable } from './gatehouse-table.ts';
import { acknowledge } from './nag.ts';

export interface SigningKeysProps {
  /** The stack's table: the key manager publishes the JWKS in it. */
  readonly table: GatehouseTable;
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
  /**
   * Days a signing key signs before the hourly maintenance publishes its successor (which signs
   * twice the key-cache lifetime later); 0 rolls over only on demand
   * (`aws lambda invoke --payload '{"action":"rotate"}'`).
   * @default 30
   */
  readonly rotationDays?: number;
}

export class SigningKeys extends Construct {
  /** The private JWK (`{kty,crv,x,y,d,kid,alg,use}`), for the token function only. */
  readonly signingKey: Secret;
  /** The custom resource; depend on it to start serving only once the keys exist. */
  readonly resource: CustomResource;
  /** The key manager behind the custom resource and the schedule (functions/keygen). */
  readonly generator: GatehouseFunction;
  /** The hourly maintenance of the key ring (rollover and retirement). */
  readonly schedule: Rule;

  constructor(scope: Construct, id: string, props: SigningKeysProps) {
    super(scope, id);

    // The secret starts with a random placeholder value; the key generator replaces it.
    this.signingKey = new Secret(this, 'SigningKey', {
      description: 'Gatehouse access-token signing key (private JWK, ES256)',
    });

    const rotationDays = props.rotationDays ?? 30;
    if (!Number.isInteger(rotationDays) || rotationDays < 0 || rotationDays > 3650) {
      throw new Error(`rotationDays must be a whole number of days from 0 to 3650, not ${rotationDays}`);
    }
    this.generator = new GatehouseFunction(this, 'Generator', {
      name: 'keygen',
      version: props.version,
      description: 'Gatehouse signing-key manager (CloudFormation custom resource, hourly rollover)',
      memorySize: 256,
      timeout: Duration.seconds(30),
      logRetention: props.logRetention,
      bundleAwsSdk: props.bundleAwsSdk,
      // The access-token lifetime and the key-cache lifetime are the functions' defaults
      // (GATEHOUSE_ACCESS_TOKEN_TTL, GATEHOUSE_KEY_CACHE_SECONDS): the retirement times use them.
      environment: {
        GATEHOUSE_SIGNING_KEY_SECRET: this.signingKey.secretArn,
        GATEHOUSE_TABLE_NAME: props.table.tableName,
        GATEHOUSE_SIGNING_KEY_ROTATION_DAYS: String(rotationDays),
      },
      noDeadLetterQueueReason:
        'Invoked by CloudFormation for the custom resource (the handler reports every failure to CloudFormation, which ' +
        'fails and rolls back the deployment) and by the hourly schedule, whose next run repeats any step a failed ' +
        'run missed: a queued event would be stale by then.',
    });
    const generator = this.generator.function;
    // Read too: the generator keeps a key pair that is already there (redeploys, retries, rollbacks).
    this.signingKey.grantRead(generator);
    this.signingKey.grantWrite(generator);
    props.table.grantPublishKeys(generator, PUBLIC_KEYS_PK);

    this.resource = new CustomResource(this, 'Generate', {
      serviceToken: generator.functionArn,
      resourceType: 'Custom::GatehouseSigningKey',
      // The handler answers within seconds; if it never does (crash, timeout), fail the
      // deployment after 5 minutes instead of CloudFormation's default hour.
      serviceTimeout: Duration.minutes(5),
      // Only where the keys go: the handler writes the values. A ring already there is kept.
      properties: {
        SigningKeySecretId: this.signingKey.secretArn,
        PublicKeysTable: props.table.tableName,
      },
    });

    // Hourly: a due rollover waits at most an hour, a retired key is dropped within an hour of its
    // last token's expiry. Two retries, and an event older than the next run is not delivered.
    this.schedule = new Rule(this, 'Rollover', {
      description: 'Gatehouse signing keys: hourly maintenance (rollover every rotationDays, retirement after the token lifetime)',
      schedule: Schedule.rate(Duration.hours(1)),
      targets: [
        new LambdaFunction(generator, {
          event: RuleTargetInput.fromObject({ action: 'maintain' }),
          retryAttempts: 2,
          maxEventAge: Duration.hours(1),
        }),
      ],
    });

    acknowledge(
      this.schedule,
      'Serverless-EventBusDLQ',
      'The event is a constant "maintain" tick: a dead-lettered one would be stale, and the next hourly run repeats ' +
        'whatever step a failed run missed (failures show as the key manager function\'s errors).',
    );

    const rotation =
      'Rotating a token signing key is a key rollover (publish the new public key, then sign with it, then retire the ' +
      'old one after the token lifetime), not a password change: a Secrets Manager rotation function would invalidate ' +
      'issued tokens. The hourly Rollover schedule drives the key manager through those steps instead.';
    acknowledge(this.signingKey, 'AwsSolutions-SMG4', rotation);
  }

  /** Read access to the private key: the token function only. */
  grantSign(grantee: IGrantable): Grant {
    return this.signingKey.grantRead(grantee);
  }
}
