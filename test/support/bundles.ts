/**
 * The deployment packages `cdk deploy` uploads, as a test can run them: the app synthesized with
 * real bundling (local esbuild, offline) into a temporary cloud assembly; each Lambda function of
 * a template with its asset directory (from the stack's assets manifest), handler string and
 * environment; the environment's deploy-time references (`Ref`, `Fn::Join`, ...) resolved to
 * local stand-ins; and each function run in its own `node` process by `lambda-runtime.mjs`, as a
 * warm Lambda execution environment.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { App } from 'aws-cdk-lib';
import { buildApp } from '../../infra/app.ts';
import { cdkJsonContext } from '../infra/app-fixture.ts';

const RUNTIME = fileURLToPath(new URL('./lambda-runtime.mjs', import.meta.url));

export type Template = { Resources: Record<string, { Type: string; Properties?: Record<string, any> }> };

export interface SynthesizedStack {
  readonly stackName: string;
  readonly region: string;
  readonly template: Template;
  /** Lambda functions by logical id. */
  readonly functions: ReadonlyMap<string, DeployedFunction>;
}

export interface Deployable {
  /** The cloud assembly's directory (outside the repository: no node_modules above it). */
  readonly outdir: string;
  readonly stacks: readonly SynthesizedStack[];
  /** Wall time of building the app and synthesizing it, bundling included. */
  readonly synthMs: number;
}

export interface DeployedFunction {
  readonly logicalId: string;
  /** The construct path of its code asset (`Functions/token/Function/Code`). */
  readonly assetName: string;
  /** The asset's source hash: equal hashes are byte-identical packages. */
  readonly assetHash: string;
  /** The unzipped deployment package (`<outdir>/asset.<hash>`). */
  readonly assetDir: string;
  readonly handler: string;
  readonly runtime: string;
  readonly memorySize: number;
  /** The template's `Environment.Variables`, unresolved. */
  readonly environment: Readonly<Record<string, unknown>>;
}

/**
 * Synthesizes the app as `cdk synth` does (cdk.json's context, `extra` on top), bundling every
 * function, into a new temporary directory.
 */
export async function synthesizeDeployable(extra: Record<string, unknown> = {}): Promise<Deployable> {
  const outdir = await mkdtemp(join(tmpdir(), 'gatehouse-cdk-out-'));
  const t0 = performance.now();
  const app = new App({ outdir, context: { ...cdkJsonContext(), ...extra } });
  // Functions bundle as their stacks are built (once per distinct package: later stacks reuse it).
  buildApp(app);
  const assembly = app.synth();
  const synthMs = performance.now() - t0;
  const stacks = assembly.stacks.map((s) => {
    const template = s.template as Template;
    const manifest = JSON.parse(readFileSync(join(outdir, `${s.stackName}.assets.json`), 'utf8')) as {
      files: Record<string, { displayName?: string; source: { path?: string } }>;
    };
    const functions = new Map<string, DeployedFunction>();
    for (const [logicalId, r] of Object.entries(template.Resources)) {
      if (r.Type !== 'AWS::Lambda::Function') continue;
      const p = r.Properties ?? {};
      const key = p.Code?.S3Key;
      const hash = typeof key === 'string' ? key.replace(/\.zip$/, '') : undefined;
      const asset = hash ? manifest.files[hash] : undefined;
      if (!hash || !asset?.source.path) throw new Error(`${s.stackName} ${logicalId}: no file asset for its code (${JSON.stringify(p.Code)})`);
      functions.set(logicalId, {
        logicalId,
        assetName: asset.displayName ?? logicalId,
        assetHash: hash,
        assetDir: join(outdir, asset.source.path),
        handler: String(p.Handler),
        runtime: String(p.Runtime),
        memorySize: typeof p.MemorySize === 'number' ? p.MemorySize : 128,
        environment: p.Environment?.Variables ?? {},
      });
    }
    return { stackName: s.stackName, region: s.environment.region, template, functions };
  });
  return { outdir, stacks, synthMs };
}

/** Whether a `node_modules` folder sits in `dir` or above it (a package could import from it). */
export function nodeModulesAbove(dir: string): string | undefined {
  for (let d = dir; ; d = dirname(d)) {
    if (existsSync(join(d, 'node_modules'))) return join(d, 'node_modules');
    if (dirname(d) === d) return undefined;
  }
}

// ---------------------------------------------------------------------------------------------
// Deploy-time references and their local stand-ins.

/** The logical ids a template value refers to (`Ref`, `Fn::GetAtt`), pseudo parameters left out. */
export function referencesOf(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(referencesOf);
  if (value === null || typeof value !== 'object') return [];
  const o = value as Record<string, unknown>;
  if (typeof o.Ref === 'string') return o.Ref.startsWith('AWS::') ? [] : [o.Ref];
  if (Array.isArray(o['Fn::GetAtt'])) return [String(o['Fn::GetAtt'][0])];
  return Object.values(o).flatMap(referencesOf);
}

export interface StandInValues {
  readonly region: string;
  /** The table created in DynamoDB Local from the same definition. */
  readonly tableName: string;
  /** The AWS stand-ins' base URL (`http://127.0.0.1:<port>`). */
  readonly awsUrl: string;
  /** The WebSocket stage path the management API is served below. */
  readonly stagePath: string;
}

/** One value resolved to a local stand-in: which setting, what it referred to, what it became. */
export interface StoodIn {
  readonly name: string;
  readonly refersTo: readonly string[];
  readonly value: string;
}

/** `arn:aws:<service>:<region>:000000000000:<resource>:<logical id>`: a fake ARN naming the resource. */
const fakeArn = (service: string, resource: string, region: string, logicalId: string): string =>
  `arn:aws:${service}:${region}:000000000000:${resource}${logicalId}`;

/**
 * The stand-in for a plain `Ref` to a resource, by the resource's type: what the reference
 * becomes once the resource exists, pointed at the local stand-in.
 */
function standInForRef(template: Template, logicalId: string, s: StandInValues): string | undefined {
  switch (template.Resources[logicalId]?.Type) {
    case 'AWS::DynamoDB::Table':
      return s.tableName;
    case 'AWS::SecretsManager::Secret':
      return fakeArn('secretsmanager', 'secret:', s.region, logicalId);
    case 'AWS::SNS::Topic':
      return fakeArn('sns', '', s.region, logicalId);
    case 'AWS::SQS::Queue':
      // The SQS client sends to the queue URL's host: the stand-in.
      return `${s.awsUrl}/000000000000/${logicalId}`;
    default:
      return undefined;
  }
}

/**
 * Stand-ins for values built from several references (URLs of the APIs and of the IoT endpoint),
 * by setting name.
 */
function standInForSetting(name: string, s: StandInValues): string | undefined {
  const host = new URL(s.awsUrl).host;
  switch (name) {
    case 'GATEHOUSE_WEBSOCKET_MANAGEMENT_URL':
      return `${s.awsUrl}${s.stagePath}`;
    case 'GATEHOUSE_EVENT_PUBLISHER_URL':
      return `ws://${host}${s.stagePath}`;
    case 'GATEHOUSE_MQTT_PUBLISHER_URL':
      return `ws://${host}/mqtt`;
    case 'GATEHOUSE_MQTT_PUBLISH_URL':
      return s.awsUrl;
    default:
      return undefined;
  }
}

/** Resolves one template value: plain strings as they are, references to their stand-in. */
export function resolveValue(template: Template, name: string, value: unknown, s: StandInValues): { value: string; stoodIn?: StoodIn } {
  if (typeof value === 'string') return { value };
  const refersTo = referencesOf(value);
  const ref = (value as { Ref?: unknown } | null)?.Ref;
  const resolved = (typeof ref === 'string' ? standInForRef(template, ref, s) : undefined) ?? standInForSetting(name, s);
  if (resolved === undefined) throw new Error(`No local stand-in for ${name} = ${JSON.stringify(value)}: add one in test/support/bundles.ts`);
  return { value: resolved, stoodIn: { name, refersTo, value: resolved } };
}

export interface FunctionEnvironment {
  readonly env: Record<string, string>;
  readonly stoodIn: readonly StoodIn[];
}

/**
 * The process environment of a function as Lambda gives it: the template's variables (references
 * stood in), what the Lambda service itself sets (region, function name, memory, task root,
 * credentials: fake ones), and the local overrides of endpoints only (DynamoDB Local, Secrets
 * Manager's stand-in).
 */
export function functionEnvironment(
  template: Template,
  fn: DeployedFunction,
  s: StandInValues & { readonly dynamoEndpoint: string },
): FunctionEnvironment {
  const env: Record<string, string> = {};
  const stoodIn: StoodIn[] = [];
  for (const [name, value] of Object.entries(fn.environment)) {
    const r = resolveValue(template, name, value, s);
    env[name] = r.value;
    if (r.stoodIn) stoodIn.push(r.stoodIn);
  }
  return {
    stoodIn,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      LANG: 'en_US.UTF-8',
      TZ: 'UTC',
      ...env,
      // Set by the Lambda service.
      AWS_REGION: s.region,
      AWS_DEFAULT_REGION: s.region,
      AWS_LAMBDA_FUNCTION_NAME: fn.logicalId,
      AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
      AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(fn.memorySize),
      AWS_EXECUTION_ENV: `AWS_Lambda_${fn.runtime}`,
      LAMBDA_TASK_ROOT: fn.assetDir,
      // The execution role's credentials are in the environment in AWS; these are fake.
      AWS_ACCESS_KEY_ID: 'AKIDLOCALSTANDIN',
      AWS_SECRET_ACCESS_KEY: 'local-stand-in-secret',
      AWS_SESSION_TOKEN: 'local-stand-in-session',
      // Local overrides: endpoints only.
      GATEHOUSE_DYNAMODB_ENDPOINT: s.dynamoEndpoint,
      AWS_ENDPOINT_URL_SECRETS_MANAGER: s.awsUrl,
      // This machine runs Node 20 (Lambda: the template's runtime); the SDK would warn on every start.
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Which function serves which API route, as the template wires it.

/** The Lambda function a value (an integration URI, an alias) leads to, through aliases and versions. */
function functionOf(template: Template, value: unknown): string | undefined {
  for (const id of referencesOf(value)) {
    const r = template.Resources[id];
    if (r?.Type === 'AWS::Lambda::Function') return id;
    if (r?.Type === 'AWS::Lambda::Alias' || r?.Type === 'AWS::Lambda::Version') {
      const fn = functionOf(template, r.Properties?.FunctionName);
      if (fn) return fn;
    }
  }
  return undefined;
}

/** Route key (`POST /token`, `$connect`) → logical id of the function its integration invokes, for one API. */
export function routeFunctions(template: Template, apiType: 'HTTP' | 'WEBSOCKET'): Map<string, string> {
  const apis = new Set(
    Object.entries(template.Resources)
      .filter(([, r]) => r.Type === 'AWS::ApiGatewayV2::Api' && r.Properties?.ProtocolType === apiType)
      .map(([id]) => id),
  );
  const out = new Map<string, string>();
  for (const r of Object.values(template.Resources)) {
    if (r.Type !== 'AWS::ApiGatewayV2::Route' || !referencesOf(r.Properties?.ApiId).some((id) => apis.has(id))) continue;
    const integrationId = referencesOf(r.Properties?.Target).find((id) => template.Resources[id]?.Type === 'AWS::ApiGatewayV2::Integration');
    const fn = integrationId ? functionOf(template, template.Resources[integrationId]!.Properties?.IntegrationUri) : undefined;
    if (fn) out.set(String(r.Properties?.RouteKey), fn);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Running a function.

export interface InvokeError extends Error {
  readonly logs: string;
}

/** One function's package in its own `node` process (see lambda-runtime.mjs). */
export class LambdaProcess {
  /** Resolves with the module's export names once the handler is loaded; rejects on an init error. */
  readonly ready: Promise<{ exports: string[] }>;
  private readonly child: ChildProcess;
  private readonly pending = new Map<string, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private readonly output: string[] = [];
  private exited = false;

  constructor(
    readonly fn: DeployedFunction,
    env: Record<string, string>,
  ) {
    // The task root is the working directory, as /var/task is in Lambda.
    this.child = spawn(process.execPath, [RUNTIME, fn.assetDir, fn.handler], {
      cwd: fn.assetDir,
      env,
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    const keep = (d: Buffer) => {
      this.output.push(d.toString('utf8'));
      if (this.output.length > 400) this.output.splice(0, this.output.length - 400);
    };
    this.child.stdout!.on('data', keep);
    this.child.stderr!.on('data', keep);
    this.ready = new Promise((resolve, reject) => {
      this.child.on('message', (m: any) => {
        if (m.type === 'ready') resolve({ exports: m.exports });
        else if (m.type === 'init-error') reject(this.error(`init failed: ${m.error.name}: ${m.error.message}`));
        else {
          const p = this.pending.get(m.id);
          this.pending.delete(m.id);
          if (m.type === 'result') p?.resolve(m.result);
          else p?.reject(this.error(`${m.error.name}: ${m.error.message}\n${m.error.stack ?? ''}`));
        }
      });
      this.child.once('exit', (code, signal) => {
        this.exited = true;
        const err = this.error(`exited (${signal ?? code})`);
        reject(err);
        for (const p of this.pending.values()) p.reject(err);
        this.pending.clear();
      });
    });
    // A failed load is reported through `ready`; nobody else needs to see it as unhandled.
    this.ready.catch(() => {});
  }

  /** The function's log output so far (its stdout and stderr). */
  logs(): string {
    return this.output.join('');
  }

  /** Invokes the handler with `event`, as the Lambda service does synchronously. */
  async invoke<T = any>(event: unknown, timeoutMs = 30_000): Promise<T> {
    await this.ready;
    const id = randomUUID();
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(this.error(`timed out after ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, {
        resolve: (v) => {
          clearTimeout(timer);
          resolve(v as T);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      this.child.send({ id, event, timeoutMs });
    });
  }

  async stop(): Promise<void> {
    if (this.exited) return;
    const exited = new Promise<void>((r) => this.child.once('exit', () => r()));
    this.child.kill('SIGTERM');
    await exited;
  }

  private error(message: string): InvokeError {
    const logs = this.logs().trim().split('\n').slice(-30).join('\n');
    return Object.assign(new Error(`${this.fn.assetName} (${this.fn.logicalId}) ${message}${logs ? `\n--- its logs ---\n${logs}` : ''}`), { logs });
  }
}
