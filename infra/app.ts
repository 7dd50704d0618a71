/**
 * The CDK app: one independent Gatehouse stack per region of the `gatehouse:regions` context
 * (`Gatehouse-US`, `Gatehouse-EU`, `Gatehouse-CA`). Each stack pins its region and leaves the
 * account to the deploying credentials; nothing is looked up, so synth works offline.
 *
 * Run by the CDK CLI through cdk.json (`npx tsx infra/app.ts`); tests call `buildApp`.
 */
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { App, Tags } from 'aws-cdk-lib';
import { readGatehouseContext } from './cdk-context.ts';
import { GatehouseStack } from './gatehouse-stack.ts';
import { addNagChecks } from './nag.ts';

export { GatehouseStack, type GatehouseStackProps } from './gatehouse-stack.ts';

/** Adds one stack per configured region to `app` and returns them. */
export function buildApp(app: App): GatehouseStack[] {
  const ctx = readGatehouseContext(app.node);
  return Object.entries(ctx.regions).map(([code, region]) => {
    const stack = new GatehouseStack(app, `Gatehouse-${code}`, {
      env: { region },
      regionCode: code,
      deletionProtection: ctx.deletionProtection,
      corsOrigins: ctx.corsOrigins,
      customDomain: ctx.customDomains[code],
      websocketAccessLogs: ctx.websocketAccessLogs,
      licenseAuthorityKey: ctx.licenseAuthorityKey,
      bundleAwsSdk: ctx.bundleAwsSdk,
      eventRetentionDays: ctx.eventRetentionDays,
      deployment: ctx.deployment,
      alarmThresholds: ctx.alarmThresholds,
      signingKeyRotationDays: ctx.signingKeyRotationDays,
      rateLimitPerInstance: ctx.rateLimitPerInstance,
      rateLimitPerUser: ctx.rateLimitPerUser,
    });
    Tags.of(stack).add('gatehouse:region', code);
    return stack;
  });
}

function isEntryPoint(): boolean {
  const script = process.argv[1];
  if (!script) return false;
  try {
    return realpathSync(script) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isEntryPoint()) {
  const app = new App();
  buildApp(app);
  // cdk-nag runs as a validation plugin: synth fails on any unacknowledged finding.
  addNagChecks(app);
  app.synth();
}
