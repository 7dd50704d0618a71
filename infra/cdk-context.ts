/**
 * The CDK context Gatehouse reads, in one place, typed and validated. Values come from
 * `cdk.json` or from `cdk synth -c key=value` (where every value arrives as a string, so each
 * reader also accepts the string form).
 *
 * | key | default | meaning |
 * | --- | --- | --- |
 * | `gatehouse:regions` | `{"US":"us-east-1","EU":"eu-west-1","CA":"ca-central-1"}` | one stack per entry: region code → AWS region |
 * | `gatehouse:deletionProtection` | `true` | DynamoDB deletion protection on each table |
 * | `gatehouse:corsOrigins` | `[]` (CORS closed) | allowed browser origins, a list or a comma-separated string; `*` allows any |
 * | `gatehouse:customDomains` | `{}` (execute-api URLs only) | per region code: `{ certificateArn, httpDomainName?, websocketDomainName? }` |
 * | `gatehouse:websocketAccessLogs` | `false` | WebSocket stage access logs (needs the account's API Gateway CloudWatch role) |
 * | `gatehouse:licenseAuthorityKey` | (none) | the licence authority's PUBLIC JWK (an object or its JSON text); without it every login answers `instance_license_tampered` |
 * | `gatehouse:eventRetentionDays` | `365` | days events are kept before DynamoDB's TTL deletes them (1–36500) |
 * | `gatehouse:signingKeyRotationDays` | `30` | days a token signing key signs before the hourly schedule rolls it over (0–3650; 0: on demand only) |
 * | `gatehouse:bundleAwsSdk` | `true` | bundle `@aws-sdk/*` into every function (the versions the lockfile pins, faster cold starts); `false` uses the SDK the Lambda runtime ships (smaller bundles; see infra/bundling.ts) |
 * | `gatehouse:deployment` | `AllAtOnce` | how a new version reaches traffic: `AllAtOnce`, or `Canary10Percent5Minutes` / `Linear10PercentEvery1Minute` (CodeDeploy, automatic rollback on the family's error alarms; see infra/deployments.ts) |
 * | `gatehouse:alarmThresholds` | `{}` (the defaults) | overrides of alarm thresholds by name (infra/alarm-thresholds.ts), e.g. `{"functionErrors": 10}` |
 * | `gatehouse:rateLimitPerInstance` | `100` | requests a second one instance's callers may make, per execution environment (a burst of twice that; 0: no limit); `GATEHOUSE_RATE_LIMIT_PER_INSTANCE` of every HTTP family |
 * | `gatehouse:rateLimitPerUser` | `20` | the same per user (`GATEHOUSE_RATE_LIMIT_PER_USER`) |
 *
 * A custom domain needs an ACM certificate in the stack's own region that covers the names; the
 * stack creates the API Gateway domain names and mappings, and outputs the regional target names
 * for the DNS records (it does not touch DNS). Example for `cdk.json`:
 *
 * ```json
 * "gatehouse:customDomains": {
 *   "EU": {
 *     "certificateArn": "arn:aws:acm:eu-west-1:111122223333:certificate/…",
 *     "httpDomainName": "eu.api.example.com",
 *     "websocketDomainName": "eu.events.example.com"
 *   }
 * }
 * ```
 */
import type { Node } from 'constructs';
import { ALARM_THRESHOLD_NAMES, thresholdProblem, type AlarmThresholds } from './alarm-thresholds.ts';
import { DEFAULT_DEPLOYMENT_STRATEGY, DEPLOYMENT_STRATEGIES, isDeploymentStrategy, type DeploymentStrategy } from './deployments.ts';

/** Region code (`US`) → AWS region (`us-east-1`). */
export const DEFAULT_REGIONS: Readonly<Record<string, string>> = Object.freeze({
  US: 'us-east-1',
  EU: 'eu-west-1',
  CA: 'ca-central-1',
});

const CONTEXT_KEYS = Object.freeze({
  regions: 'gatehouse:regions',
  deletionProtection: 'gatehouse:deletionProtection',
  corsOrigins: 'gatehouse:corsOrigins',
  customDomains: 'gatehouse:customDomains',
  websocketAccessLogs: 'gatehouse:websocketAccessLogs',
  licenseAuthorityKey: 'gatehouse:licenseAuthorityKey',
  bundleAwsSdk: 'gatehouse:bundleAwsSdk',
  eventRetentionDays: 'gatehouse:eventRetentionDays',
  deployment: 'gatehouse:deployment',
  alarmThresholds: 'gatehouse:alarmThresholds',
  signingKeyRotationDays: 'gatehouse:signingKeyRotationDays',
  rateLimitPerInstance: 'gatehouse:rateLimitPerInstance',
  rateLimitPerUser: 'gatehouse:rateLimitPerUser',
});

/** Custom domain names of one region's APIs. */
export interface CustomDomainConfig {
  /** ACM certificate, in the stack's region, covering the domain names below. */
  readonly certificateArn: string;
  /** Domain name of the HTTP API (`eu.api.example.com`). */
  readonly httpDomainName?: string;
  /** Domain name of the WebSocket API (`eu.events.example.com`). */
  readonly websocketDomainName?: string;
}

export interface GatehouseContext {
  readonly regions: Readonly<Record<string, string>>;
  readonly deletionProtection: boolean;
  readonly corsOrigins: readonly string[];
  readonly customDomains: Readonly<Record<string, CustomDomainConfig>>;
  readonly websocketAccessLogs: boolean;
  /** JSON text of the licence authority's public JWK, when configured. */
  readonly licenseAuthorityKey: string | undefined;
  /** Bundle the AWS SDK into every function instead of using the Lambda runtime's. */
  readonly bundleAwsSdk: boolean;
  /** Days events are kept (their TTL). */
  readonly eventRetentionDays: number;
  /** How a new version of each family's code reaches traffic. */
  readonly deployment: DeploymentStrategy;
  /** Alarm thresholds that differ from the defaults. */
  readonly alarmThresholds: Readonly<Partial<AlarmThresholds>>;
  /** Days a token signing key signs before the scheduled rollover; 0: on demand only. */
  readonly signingKeyRotationDays: number;
  /** Requests a second per instance, per execution environment of an HTTP family; 0: no limit. */
  readonly rateLimitPerInstance: number;
  /** Requests a second per user, per execution environment of an HTTP family; 0: no limit. */
  readonly rateLimitPerUser: number;
}

/** The tenant rate limits of a deployment unless the context says otherwise (requests a second). */
export const DEFAULT_RATE_LIMITS = Object.freeze({ perInstance: 100, perUser: 20 });

const AWS_REGION = /^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-\d$/;
const REGION_CODE = /^[A-Z][A-Za-z0-9]*$/;

function fail(key: string, message: string): never {
  throw new Error(`Invalid CDK context ${key}: ${message}`);
}

/** JSON objects given with `-c key='{"…"}'` arrive as strings. */
function objectValue(key: string, value: unknown): Record<string, unknown> | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  let v = value;
  if (typeof v === 'string') {
    try {
      v = JSON.parse(v);
    } catch {
      fail(key, 'expected a JSON object');
    }
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) fail(key, 'expected a JSON object');
  return v as Record<string, unknown>;
}

function booleanValue(key: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined || value === null || value === '') return fallback;
  if (typeof value === 'boolean') return value;
  if (value === 'true') return true;
  if (value === 'false') return false;
  return fail(key, 'expected true or false');
}

function integerValue(key: string, value: unknown, fallback: number, min: number, max: number): number {
  if (value === undefined || value === null || value === '') return fallback;
  const n = typeof value === 'string' && /^\d+$/.test(value.trim()) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < min || n > max) return fail(key, `expected a whole number from ${min} to ${max}`);
  return n;
}

function stringList(key: string, value: unknown): string[] {
  if (value === undefined || value === null || value === '') return [];
  const items = typeof value === 'string' ? value.split(',') : value;
  if (!Array.isArray(items) || !items.every((i) => typeof i === 'string')) fail(key, 'expected a list of strings');
  return items.map((i) => i.trim()).filter(Boolean);
}

function regionsValue(value: unknown): Record<string, string> {
  const key = CONTEXT_KEYS.regions;
  const obj = objectValue(key, value) ?? { ...DEFAULT_REGIONS };
  const entries = Object.entries(obj);
  if (entries.length === 0) fail(key, 'at least one region is needed');
  for (const [code, region] of entries) {
    if (!REGION_CODE.test(code)) fail(key, `region code "${code}" must start with a capital letter and be alphanumeric`);
    if (typeof region !== 'string' || !AWS_REGION.test(region)) fail(key, `"${code}" must name an AWS region code (us-east-1)`);
  }
  return obj as Record<string, string>;
}

function customDomainsValue(value: unknown, regions: Record<string, string>): Record<string, CustomDomainConfig> {
  const key = CONTEXT_KEYS.customDomains;
  const obj = objectValue(key, value) ?? {};
  for (const [code, domain] of Object.entries(obj)) {
    if (!(code in regions)) fail(key, `"${code}" is not one of the regions (${Object.keys(regions).join(', ')})`);
    const d = domain as Partial<Record<keyof CustomDomainConfig, unknown>> | null;
    if (typeof d !== 'object' || d === null) fail(key, `"${code}" must be an object`);
    if (typeof d.certificateArn !== 'string' || !d.certificateArn.startsWith('arn:')) fail(key, `"${code}".certificateArn must be an ACM certificate ARN`);
    for (const name of ['httpDomainName', 'websocketDomainName'] as const) {
      if (d[name] !== undefined && typeof d[name] !== 'string') fail(key, `"${code}".${name} must be a string`);
    }
  }
  return obj as Record<string, CustomDomainConfig>;
}

/** A public JWK (never a private one: it would land in the template). */
function publicJwkValue(value: unknown): string | undefined {
  const key = CONTEXT_KEYS.licenseAuthorityKey;
  const jwk = objectValue(key, value);
  if (!jwk) return undefined;
  if (typeof jwk.kty !== 'string') fail(key, 'expected a JWK with "kty"');
  if ('d' in jwk) fail(key, 'this is a private key: give the public JWK only');
  return JSON.stringify(jwk);
}

function deploymentValue(value: unknown): DeploymentStrategy {
  if (value === undefined || value === null || value === '') return DEFAULT_DEPLOYMENT_STRATEGY;
  if (!isDeploymentStrategy(value)) {
    return fail(CONTEXT_KEYS.deployment, `expected one of ${DEPLOYMENT_STRATEGIES.join(', ')} (got ${JSON.stringify(value)})`);
  }
  return value;
}

function alarmThresholdsValue(value: unknown): Partial<AlarmThresholds> {
  const key = CONTEXT_KEYS.alarmThresholds;
  const obj = objectValue(key, value) ?? {};
  const out: Partial<Record<keyof AlarmThresholds, number>> = {};
  for (const [name, raw] of Object.entries(obj)) {
    if (!(ALARM_THRESHOLD_NAMES as readonly string[]).includes(name)) {
      fail(key, `unknown threshold "${name}" (known: ${ALARM_THRESHOLD_NAMES.join(', ')})`);
    }
    const n = typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : raw;
    const problem = thresholdProblem(name as keyof AlarmThresholds, n);
    if (problem) fail(key, problem);
    out[name as keyof AlarmThresholds] = n as number;
  }
  return out;
}

/** Reads and validates the Gatehouse context of an app (or any construct's node). */
export function readGatehouseContext(node: Node): GatehouseContext {
  const regions = regionsValue(node.tryGetContext(CONTEXT_KEYS.regions));
  return Object.freeze({
    regions: Object.freeze(regions),
    deletionProtection: booleanValue(CONTEXT_KEYS.deletionProtection, node.tryGetContext(CONTEXT_KEYS.deletionProtection), true),
    corsOrigins: Object.freeze(stringList(CONTEXT_KEYS.corsOrigins, node.tryGetContext(CONTEXT_KEYS.corsOrigins))),
    customDomains: Object.freeze(customDomainsValue(node.tryGetContext(CONTEXT_KEYS.customDomains), regions)),
    websocketAccessLogs: booleanValue(
      CONTEXT_KEYS.websocketAccessLogs,
      node.tryGetContext(CONTEXT_KEYS.websocketAccessLogs),
      false,
    ),
    licenseAuthorityKey: publicJwkValue(node.tryGetContext(CONTEXT_KEYS.licenseAuthorityKey)),
    bundleAwsSdk: booleanValue(CONTEXT_KEYS.bundleAwsSdk, node.tryGetContext(CONTEXT_KEYS.bundleAwsSdk), true),
    // The same range as GATEHOUSE_EVENT_RETENTION_DAYS (shared/config.ts), which it sets.
    eventRetentionDays: integerValue(CONTEXT_KEYS.eventRetentionDays, node.tryGetContext(CONTEXT_KEYS.eventRetentionDays), 365, 1, 36500),
    deployment: deploymentValue(node.tryGetContext(CONTEXT_KEYS.deployment)),
    alarmThresholds: Object.freeze(alarmThresholdsValue(node.tryGetContext(CONTEXT_KEYS.alarmThresholds))),
    // The same range as GATEHOUSE_SIGNING_KEY_ROTATION_DAYS (shared/config.ts), which it sets on the key manager.
    signingKeyRotationDays: integerValue(
      CONTEXT_KEYS.signingKeyRotationDays,
      node.tryGetContext(CONTEXT_KEYS.signingKeyRotationDays),
      30,
      0,
      3650,
    ),
    // The same range as GATEHOUSE_RATE_LIMIT_PER_INSTANCE and _PER_USER (shared/config.ts), which they set.
    rateLimitPerInstance: integerValue(
      CONTEXT_KEYS.rateLimitPerInstance,
      node.tryGetContext(CONTEXT_KEYS.rateLimitPerInstance),
      DEFAULT_RATE_LIMITS.perInstance,
      0,
      1_000_000,
    ),
    rateLimitPerUser: integerValue(CONTEXT_KEYS.rateLimitPerUser, node.tryGetContext(CONTEXT_KEYS.rateLimitPerUser), DEFAULT_RATE_LIMITS.perUser, 0, 1_000_000),
  });
}
