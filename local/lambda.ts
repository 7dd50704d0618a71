/**
 * Invokes the family handlers in-process, as Lambda would: each family's `handler.ts` is imported
 * on first use (so a family that does not exist yet fails only its own routes), and each call gets
 * a Lambda-like context.
 */
import { randomUUID } from 'node:crypto';
import type { Context } from 'aws-lambda';
import type { Family } from '#shared/model/collections.ts';

/** API Gateway's integration timeout (HTTP API: 30 s); also what the context reports. */
const INVOKE_TIMEOUT_MS = 30_000;

export type LambdaHandler = (event: any, context: Context) => Promise<unknown>;

/** The family's `functions/<family>/handler.ts` does not exist (yet). */
export class FamilyMissing extends Error {
  constructor(readonly family: Family) {
    super(`functions/${family}/handler.ts does not exist`);
    this.name = 'FamilyMissing';
  }
}

/**
 * A Lambda context for one invocation. The methods live on the prototype: a context is built for
 * every request, and a handful of fresh closures per request is measurable at the runtime's rates.
 */
class LocalContext implements Context {
  readonly callbackWaitsForEmptyEventLoop = false;
  readonly functionName: string;
  readonly functionVersion = '$LATEST';
  readonly invokedFunctionArn: string;
  readonly memoryLimitInMB = '1024';
  readonly logGroupName: string;
  readonly logStreamName: string;
  constructor(
    readonly awsRequestId: string,
    private readonly deadline: number,
    names: FunctionNames,
  ) {
    this.functionName = names.functionName;
    this.invokedFunctionArn = names.invokedFunctionArn;
    this.logGroupName = names.logGroupName;
    this.logStreamName = names.logStreamName;
  }
  getRemainingTimeInMillis(): number {
    return Math.max(0, this.deadline - Date.now());
  }
  done(): void {}
  fail(): void {}
  succeed(): void {}
}

interface FunctionNames {
  readonly functionName: string;
  readonly invokedFunctionArn: string;
  readonly logGroupName: string;
  readonly logStreamName: string;
}

/** The names of each family's function, built once. */
const namesOf = new Map<Family, FunctionNames>();

/** A Lambda context for one invocation. */
function lambdaContext(family: Family, requestId: string = randomUUID(), timeoutMs = INVOKE_TIMEOUT_MS): Context {
  let names = namesOf.get(family);
  if (!names) {
    const functionName = `gatehouse-${family}`;
    names = {
      functionName,
      invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${functionName}`,
      logGroupName: `/aws/lambda/${functionName}`,
      logStreamName: `local/${process.pid}`,
    };
    namesOf.set(family, names);
  }
  return new LocalContext(requestId, Date.now() + timeoutMs, names);
}

/**
 * Builds a family's handler in place of importing its exported `handler`: how the runtime gives a
 * family dependencies of its own process (see `local/server.ts`).
 */
export type HandlerBuilder = () => Promise<LambdaHandler>;

export class FamilyLoader {
  /** @param builders families whose handler is built, not imported as exported. */
  constructor(private readonly builders: Partial<Record<Family, HandlerBuilder>> = {}) {}

  private readonly loaded = new Map<Family, Promise<LambdaHandler>>();
  /** The handlers imported so far: a call to one of them waits for nothing before it starts. */
  private readonly ready = new Map<Family, LambdaHandler>();

  /** The family's exported `handler`. Failures are not cached: a family that lands later loads then. */
  handler(family: Family): Promise<LambdaHandler> {
    let h = this.loaded.get(family);
    if (!h) {
      h = this.importHandler(family);
      this.loaded.set(family, h);
      h.then(
        (handler) => this.ready.set(family, handler),
        () => this.loaded.delete(family),
      );
    }
    return h;
  }

  /** Calls the family's handler with a fresh context. */
  invoke(family: Family, event: unknown, requestId?: string): Promise<unknown> {
    const ready = this.ready.get(family);
    if (!ready) return this.handler(family).then((handler) => handler(event, lambdaContext(family, requestId)));
    try {
      return ready(event, lambdaContext(family, requestId));
    } catch (err) {
      return Promise.reject(err);
    }
  }

  private async importHandler(family: Family): Promise<LambdaHandler> {
    const build = this.builders[family];
    if (build) return build();
    let mod: { handler?: unknown };
    try {
      const specifier = `#functions/${family}/handler.ts`;
      mod = (await import(/* @vite-ignore */ specifier)) as { handler?: unknown };
    } catch (err) {
      const e = err as NodeJS.ErrnoException & { url?: string };
      const self = `functions/${family}/handler.ts`;
      if (e.code === 'ERR_MODULE_NOT_FOUND' && (e.url?.endsWith(self) || e.message.includes(`${self}'`))) {
        throw new FamilyMissing(family);
      }
      throw err;
    }
    if (typeof mod.handler !== 'function') throw new Error(`functions/${family}/handler.ts exports no handler`);
    return mod.handler as LambdaHandler;
  }
}
