/**
 * The CDK feature flags cdk.json leaves unset on purpose. cdk.json sets every other flag that
 * aws-cdk-lib recommends for new projects (`CURRENTLY_RECOMMENDED_FLAGS` of
 * `aws-cdk-lib/cx-api`) to its recommended value; test/infra/validation.test.ts checks both
 * lists against the installed aws-cdk-lib, so an upgrade that recommends a new flag fails there
 * until it is set or listed here with its reason. docs/aws.md ("Deployment") repeats
 * this list.
 */
export const UNSET_FEATURE_FLAGS: Readonly<Record<string, string>> = Object.freeze({
  '@aws-cdk/aws-kms:applyImportedAliasPermissionsToPrincipal':
    'With it, granting publish on the one-time-password topic (encrypted with the AWS managed alias/aws/sns key) ' +
    'adds kms:GenerateDataKey* and kms:Decrypt on every key of the account (key/*, conditioned on the alias) to the ' +
    'token role. The AWS managed key\'s own policy already lets the account\'s principals use it through SNS, so the ' +
    'grant would add a wildcard permission and nothing else.',
  '@aws-cdk/core:enableAdditionalMetadataCollection':
    'It records which construct properties we use into the templates\' CDK metadata for AWS\'s usage analytics. ' +
    'Nothing in Gatehouse needs it, and we keep telemetry off (CDK_DISABLE_CLI_TELEMETRY).',
});
