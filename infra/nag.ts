/**
 * cdk-nag (v3) wiring. The rule packs run as CDK validation plugins, so `app.synth()` (and so
 * `cdk synth`) fails on any finding that is not acknowledged. Acknowledgements live next to the
 * resource they are about, each with its reason; this module only has the helpers.
 */
import { Stack, Validations, type App } from 'aws-cdk-lib';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';

/** Registers the AWS Solutions and Serverless rule packs on an app. */
export function addNagChecks(app: App): void {
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app), new ServerlessChecks(app));
}

/** Acknowledges one rule (or one `Rule[finding]`) on a construct and everything below it. */
export function acknowledge(scope: IConstruct, id: string, reason: string): void {
  Validations.of(scope).acknowledge({ id, reason });
}

/**
 * Renders a policy resource the way cdk-nag names an IAM5 finding (`Fn::GetAtt` → `<Id.Attr>`,
 * `Ref` → `<Id>`, `Fn::Join` joined), so a wildcard acknowledgement names exactly one resource
 * pattern instead of every wildcard of the role.
 */
function nagResourceName(scope: IConstruct, resource: string): string {
  const visit = (node: unknown): string => {
    if (node === undefined) return '';
    if (typeof node === 'string') return node.replace(/\$\{/g, '<').replace(/\}/g, '>');
    if (typeof node === 'object' && node !== null) {
      const o = node as Record<string, unknown>;
      if (o['Fn::Join']) {
        const [delimiter, items] = o['Fn::Join'] as [string, unknown[]];
        return items.map(visit).join(delimiter);
      }
      if (o['Fn::Sub']) return visit(o['Fn::Sub']);
      if (o['Fn::GetAtt']) {
        const [id, attr] = o['Fn::GetAtt'] as [unknown, unknown];
        return `<${visit(id)}.${visit(attr)}>`;
      }
      if (o.Ref) return `<${visit(o.Ref)}>`;
    }
    return JSON.stringify(node);
  };
  return visit(Stack.of(scope).resolve(resource));
}

/** Acknowledges `AwsSolutions-IAM5` for one wildcard resource pattern of the policies under `scope`. */
export function acknowledgeWildcardResource(scope: IConstruct, resource: string, reason: string): void {
  acknowledge(scope, `AwsSolutions-IAM5[Resource::${nagResourceName(scope, resource)}]`, reason);
}
