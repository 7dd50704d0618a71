/**
 * Offline template validation at synth: cdk.json makes aws-cdk-lib's CloudFormation validation
 * (`@aws/cloudformation-validate`) strict, every template synthesizes with zero findings, and the
 * CDK feature flags are the recommended ones except the few listed in infra/feature-flags.ts.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CfnResource, Stack } from 'aws-cdk-lib';
import * as cxapi from 'aws-cdk-lib/cx-api';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../../infra/app.ts';
import { PROJECT_ROOT } from '../../infra/bundling.ts';
import { UNSET_FEATURE_FLAGS } from '../../infra/feature-flags.ts';
import { addNagChecks } from '../../infra/nag.ts';
import { cdkJsonContext, newApp } from './app-fixture.ts';

const VALIDATE_FLAG = '@aws-cdk/core:validateAgainstDefaultRules';
const recommended = (cxapi as unknown as { CURRENTLY_RECOMMENDED_FLAGS: Record<string, unknown> }).CURRENTLY_RECOMMENDED_FLAGS;

interface Report {
  pluginReports: { pluginName: string; violations?: { ruleName: string; severity: string }[] }[];
}

/** Synthesizes and returns the findings of CloudFormation's own validation. */
function cfnFindings(outdir: string): { ruleName: string; severity: string }[] {
  const report = JSON.parse(readFileSync(join(outdir, 'validation-report.json'), 'utf8')) as Report;
  return report.pluginReports.filter((p) => p.pluginName === 'CloudFormation Validate').flatMap((p) => p.violations ?? []);
}

describe('CDK feature flags', () => {
  const context = cdkJsonContext();

  it('makes CloudFormation validation at synth strict', () => {
    expect(context[VALIDATE_FLAG]).toBe(true);
  });

  it('sets every recommended flag of the installed aws-cdk-lib to its recommended value, except the listed ones', () => {
    const missing = Object.keys(recommended).filter((flag) => !(flag in context) && !(flag in UNSET_FEATURE_FLAGS));
    expect(missing, 'recommended flags neither set in cdk.json nor listed in infra/feature-flags.ts').toEqual([]);
    for (const [flag, value] of Object.entries(recommended)) {
      if (flag in UNSET_FEATURE_FLAGS) expect(context[flag], flag).toBeUndefined();
      else expect(context[flag], flag).toEqual(value);
    }
  });

  it('lists only flags aws-cdk-lib recommends, each with its reason, and docs/aws.md names them', () => {
    const guide = readFileSync(join(PROJECT_ROOT, 'docs', 'aws.md'), 'utf8');
    for (const [flag, reason] of Object.entries(UNSET_FEATURE_FLAGS)) {
      expect(recommended, flag).toHaveProperty([flag]);
      expect(reason.length).toBeGreaterThan(40);
      expect(guide).toContain(`\`${flag}\``);
    }
  });
});

describe('CloudFormation validation at synth', () => {
  it('finds nothing in any regional template', () => {
    const app = newApp();
    buildApp(app);
    app.synth();
    expect(cfnFindings(app.outdir)).toEqual([]);
  });

  it('finds nothing, and cdk-nag passes, with CodeDeploy deployment groups', () => {
    const app = newApp({ 'gatehouse:regions': { EU: 'eu-west-1' }, 'gatehouse:deployment': 'Canary10Percent5Minutes' });
    buildApp(app);
    addNagChecks(app);
    expect(() => app.synth()).not.toThrow();
    expect(cfnFindings(app.outdir)).toEqual([]);
  });

  it('rejects a synth with an invalid resource under cdk.json\'s context, and only warns without the flag', () => {
    const broken = (extra: Record<string, unknown>) => {
      const app = newApp({ 'gatehouse:regions': { EU: 'eu-west-1' }, ...extra });
      const stack = new Stack(app, 'Broken', { env: { region: 'eu-west-1' } });
      new CfnResource(stack, 'Queue', { type: 'AWS::SQS::Queue', properties: { VisibilityTimeout: 999_999 } });
      return app;
    };
    expect(() => broken({}).synth()).toThrow(/ERROR VisibilityTimeout: 999999 is greater than the maximum of 43200 \(CloudFormation Validate\)/);
    const lenient = broken({ [VALIDATE_FLAG]: false });
    expect(() => lenient.synth()).not.toThrow();
    expect(cfnFindings(lenient.outdir).map((f) => f.ruleName)).toContain('F3034');
  });
});

describe('the pipeline example (examples/deploy.github-workflow.yml)', () => {
  const workflow = readFileSync(join(PROJECT_ROOT, 'examples', 'deploy.github-workflow.yml'), 'utf8');

  it('tests, then diffs and deploys exactly the regions of cdk.json, one stack at a time, with OIDC credentials', () => {
    const regions = cdkJsonContext()['gatehouse:regions'] as Record<string, string>;
    const matrix = [...workflow.matchAll(/- \{ code: (\w+), region: ([a-z0-9-]+) \}/g)].map((m) => [m[1], m[2]]);
    expect(Object.fromEntries(matrix)).toEqual(regions);
    for (const command of ['npm ci', 'npm test', 'npx cdk diff Gatehouse-${{ matrix.code }}', 'npx cdk deploy Gatehouse-${{ matrix.code }}']) {
      expect(workflow).toContain(command);
    }
    expect(workflow).toMatch(/id-token: write/);
    expect(workflow).toMatch(/role-to-assume: \$\{\{ vars\.GATEHOUSE_DEPLOY_ROLE_ARN \}\}/);
    expect(workflow).toMatch(/max-parallel: 1/);
    expect(workflow).not.toMatch(/aws-access-key-id|AWS_SECRET_ACCESS_KEY/);
  });
});
