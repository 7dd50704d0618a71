/**
 * Builds the CDK app as `cdk synth` does (cdk.json context), with bundling skipped so no
 * esbuild runs: templates only.
 */
import { readFileSync } from 'node:fs';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { buildApp, type GatehouseStack } from '../../infra/app.ts';
import { PROJECT_ROOT } from '../../infra/bundling.ts';

/** The `context` of cdk.json. */
export function cdkJsonContext(): Record<string, unknown> {
  const cdkJson = JSON.parse(readFileSync(`${PROJECT_ROOT}/cdk.json`, 'utf8')) as { context?: Record<string, unknown> };
  return cdkJson.context ?? {};
}

/** A new app with cdk.json's context, `extra` context on top, and bundling skipped. */
export function newApp(extra: Record<string, unknown> = {}): App {
  return new App({ context: { ...cdkJsonContext(), ...extra, 'aws:cdk:bundling-stacks': [] } });
}

export interface BuiltApp {
  readonly app: App;
  readonly stacks: readonly GatehouseStack[];
  readonly templates: ReadonlyMap<string, Template>;
}

/** Builds the app and the template of every stack. */
export function buildTemplates(extra: Record<string, unknown> = {}): BuiltApp {
  const app = newApp(extra);
  const stacks = buildApp(app);
  const templates = new Map(stacks.map((s) => [s.stackName, Template.fromStack(s)]));
  return { app, stacks, templates };
}

/** Logical id → resource, for resources of one type. */
export function resourcesOf(template: Template, type: string): Record<string, { Properties: Record<string, unknown>; DependsOn?: string[] }> {
  return template.findResources(type) as Record<string, { Properties: Record<string, unknown>; DependsOn?: string[] }>;
}
